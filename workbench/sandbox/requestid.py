"""Pure ASGI middleware: give every request an id and echo it on every response."""

from __future__ import annotations

import uuid

from starlette.datastructures import Headers, MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from workbench.sandbox.errors import error_response

__all__ = ["RequestIdMiddleware"]


def _valid(value: str) -> bool:
    try:
        uuid.UUID(value)
    except ValueError:
        return False
    return len(value) <= 64


class RequestIdMiddleware:
    """Take X-Request-Id when it is a UUID, generate one when absent, echo it back.

    A response that already carries X-Request-Id (an idempotent replay of the original
    response) keeps its own.
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        given = Headers(scope=scope).get("x-request-id")
        request_id = given if given and _valid(given) else str(uuid.uuid4())
        scope.setdefault("state", {})["request_id"] = request_id
        if given is not None and request_id != given:
            response = error_response("SVC-GW-4000", "X-Request-Id must be a UUID", request_id)
            await response(scope, receive, send)
            return

        async def send_with_id(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                if "x-request-id" not in headers:
                    headers["X-Request-Id"] = request_id
            await send(message)

        await self.app(scope, receive, send_with_id)
