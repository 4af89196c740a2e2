"""Routes that build their validators when first used, not when declared.

FastAPI analyses a route when it is declared: its parameters and dependencies, a
validator for its answer and one for each documented error status. The sandbox
declares some fifty routes and a start needed only the one its first request asks
for, so `LazyAPIRoute` keeps what matching a request needs (path, methods, name) and
builds the rest, as `fastapi.routing.APIRoute` would, the first time anything else of
it is read: its first request, or the OpenAPI document (which reads every route).

A request never reads the validators of a route's documented error statuses (each
``responses`` entry's model): only the document does. A route built by its first request
therefore makes them when first read (`LazyAPIRoute.response_fields`), and a start
whose first request answers with its own reply imports no more of pydantic than that.

The app holds these routes themselves (`add_routes`), not through
``include_router``: an included router is copied per inclusion on its first request,
and the copy reads, hence builds, every route of the router.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from fastapi import APIRouter, FastAPI
from fastapi.routing import APIRoute
from fastapi.utils import create_model_field, is_body_allowed_for_status_code
from starlette.routing import compile_path, get_name

if TYPE_CHECKING:
    from fastapi._compat import ModelField

__all__ = ["LazyAPIRoute", "add_routes"]


class LazyAPIRoute(APIRoute):
    """An `APIRoute` that matches requests at once and builds the rest on first use.

    Declaring one validates nothing: a route whose parameters FastAPI cannot read fails
    on its first request or when the OpenAPI document is made (the tests make it),
    with FastAPI's own error.
    """

    def __init__(self, path: str, endpoint: Callable[..., Any], **options: Any) -> None:
        # Only what `matches`, `url_path_for` and a repr read; `__getattr__` does the rest.
        self._pending: tuple[str, Callable[..., Any], dict[str, Any]] | None = (
            path,
            endpoint,
            options,
        )
        self._building = False
        self._lock = threading.RLock()
        self.path = path
        self.endpoint = endpoint
        name = options.get("name")
        self.name = get_name(endpoint) if name is None else name
        self.path_regex, self.path_format, self.param_convertors = compile_path(path)
        self.methods = {method.upper() for method in options.get("methods") or ["GET"]}
        self.include_in_schema = options.get("include_in_schema", True)

    def __getattr__(self, attribute: str) -> Any:
        # Called only for an attribute not set yet: every other one is built here.
        if attribute.startswith("__") or attribute in ("_pending", "_building", "_lock"):
            raise AttributeError(attribute)
        with self._lock:
            pending = self._pending
            if pending is not None and not self._building:
                self._building = True
                try:
                    self._build(*pending)
                    self._pending = None
                finally:
                    self._building = False
            made = "response_fields" in self.__dict__  # by another thread, say
            if attribute == "response_fields" and self._pending is None and not made:
                self.response_fields = _response_fields(self)
        return object.__getattribute__(self, attribute)

    def _build(self, path: str, endpoint: Callable[..., Any], options: dict[str, Any]) -> None:
        """`APIRoute`'s own analysis, less the error statuses' validators (made when read)."""
        responses: dict[int | str, dict[str, Any]] = options.get("responses") or {}
        without_models = {
            status: {key: value for key, value in response.items() if key != "model"}
            for status, response in responses.items()
        }
        APIRoute.__init__(self, path, endpoint, **{**options, "responses": without_models})
        self.responses = responses
        del self.response_fields  # `__getattr__` makes them when first read

    @property
    def built(self) -> bool:
        """Whether the route has built its validators (read by the start-up tests)."""
        return self._pending is None


def _response_fields(route: APIRoute) -> dict[int | str, ModelField]:
    """The validators of ``route``'s documented statuses, as `APIRoute` makes them."""
    fields: dict[int | str, ModelField] = {}
    for status, response in route.responses.items():
        model = response.get("model")
        if model:
            assert is_body_allowed_for_status_code(status), (
                f"Status code {status} must not have a response body"
            )
            name = f"Response_{status}_{route.unique_id}"
            fields[status] = create_model_field(name=name, type_=model, mode="serialization")
    return fields


def add_routes(app: FastAPI, routers: Iterable[APIRouter]) -> None:
    """Serve the routes of ``routers`` as the app's own, in order.

    Equivalent to ``app.include_router(router)`` for a router included without options
    (its prefix, tags and responses are already in its routes), except that the app's
    ``dependency_overrides`` do not reach them: the sandbox sets none.
    """
    for router in routers:
        app.router.routes.extend(router.routes)
