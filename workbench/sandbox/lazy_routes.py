"""Routes that build their validators when first used, not when declared.

FastAPI analyses a route when it is declared: its parameters and dependencies, a
validator for its answer and one for each documented error status. The sandbox
declares some fifty routes and a start needed only the one its first request asks
for, so `LazyAPIRoute` keeps what matching a request needs (path, methods, name) and
builds the rest, as `fastapi.routing.APIRoute` would, the first time anything else of
it is read: its first request, or the OpenAPI document (which reads every route).

The app holds these routes themselves (`add_routes`), not through
``include_router``: an included router is copied per inclusion on its first request,
and the copy reads, hence builds, every route of the router.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from typing import Any

from fastapi import APIRouter, FastAPI
from fastapi.routing import APIRoute
from starlette.routing import compile_path, get_name

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
                    path, endpoint, options = pending
                    APIRoute.__init__(self, path, endpoint, **options)
                    self._pending = None
                finally:
                    self._building = False
        return object.__getattribute__(self, attribute)

    @property
    def built(self) -> bool:
        """Whether the route has built its validators (read by the start-up tests)."""
        return self._pending is None


def add_routes(app: FastAPI, routers: Iterable[APIRouter]) -> None:
    """Serve the routes of ``routers`` as the app's own, in order.

    Equivalent to ``app.include_router(router)`` for a router included without options
    (its prefix, tags and responses are already in its routes), except that the app's
    ``dependency_overrides`` do not reach them: the sandbox sets none.
    """
    for router in routers:
        app.router.routes.extend(router.routes)
