"""`MethodGate`: a method no route at the path takes is refused before anything else.

Every route answers only its own methods. A request whose path some route serves, but
not with the request's method, is answered ``405`` SVC-GW-4005 with ``Allow``
(`RouteMethods`) here, in front of the rate limits, the body, the signature, strict
replay, idempotency and the database: a route's own handling (the card charge's
straight call, say) never sees a method it does not take, and nothing is counted,
read or written for it. A path no route serves goes on to its 404.

``HEAD`` on a page is answered as its ``GET``: the request goes on as a ``GET`` (a copy
of the scope; the server still sees ``HEAD`` and sends no body).
"""

from __future__ import annotations

from collections.abc import Sequence

from starlette.routing import BaseRoute
from starlette.types import ASGIApp, Receive, Scope, Send

from workbench.sandbox.edge.allow import RouteMethods
from workbench.sandbox.errors import error_response, request_id_of

__all__ = ["MethodGate"]


class MethodGate:
    """Refuse with 405 and ``Allow`` a method the path's routes do not take.

    Args:
        app: the wrapped application.
        routes: the application's route list (`RouteMethods` reads it on first use).
    """

    def __init__(self, app: ASGIApp, *, routes: Sequence[BaseRoute]) -> None:
        self.app = app
        self.methods = RouteMethods(routes)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        allowed = self.methods.for_path(str(scope["path"]))
        method = str(scope["method"])
        if allowed is None or (method in allowed.methods and method != "HEAD"):
            await self.app(scope, receive, send)
        elif method not in allowed.methods:
            headers = {"Allow": allowed.header}
            message = "method not allowed on this route"
            response = error_response("SVC-GW-4005", message, request_id_of(scope), headers)
            await response(scope, receive, send)
        elif allowed.head_as_get:
            await self.app({**scope, "method": "GET"}, receive, send)
        else:
            await self.app(scope, receive, send)
