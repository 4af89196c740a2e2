"""Pure ASGI middleware: give every request an id and echo it on every response."""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from workbench.sandbox.context import request_header, request_state
from workbench.sandbox.errors import error_response
from workbench.sandbox.ids import new_uuid
from workbench.spec import is_uuid4

__all__ = ["RequestIdMiddleware"]


class RequestIdMiddleware:
    """Take X-Request-Id when it is a UUID v4, generate one when absent, echo it back.

    Any other value (another UUID version, braces, a ``urn:uuid:`` prefix, free text) is
    400 SVC-GW-4000 naming the header, under a generated id: the ``requestId`` of every
    answer is a UUID v4, as the spec's header table says.

    A response that already carries X-Request-Id (an idempotent replay of the original
    response) keeps its own.
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        given = request_header(scope, b"x-request-id")
        request_id = given if given and is_uuid4(given) else new_uuid()
        request_state(scope).request_id = request_id
        if given is not None and request_id != given:
            response = error_response(
                "SVC-GW-4000",
                "X-Request-Id must be a UUID v4 (like 3f2b8c1e-9d4a-4b7e-8c2f-1a5d6e7f8091)",
                request_id,
            )
            await response(scope, receive, send)
            return

        header = (b"x-request-id", request_id.encode("latin-1"))

        async def send_with_id(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = message.get("headers") or []
                if b"x-request-id" not in dict(headers):  # names are lower case in ASGI
                    message["headers"] = [*headers, header]
            await send(message)

        await self.app(scope, receive, send_with_id)
