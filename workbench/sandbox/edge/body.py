"""`BodyLimits`: read the body once, refuse one too large or carrying a NUL.

The body is read here, whole, before anything else looks at it: one larger than
`workbench.spec.limits.MAX_BODY_BYTES` (announced or sent) is 413 SVC-GW-4013, and a
NUL anywhere a text field could get it (path, query string, body, escaped or not) is
400 SVC-GW-4000, since PostgreSQL cannot store one (SQLite follows). The bytes are kept
in the request state (`RequestState.body`: what the signature is verified over) and
given again to the layers after this one (`replaying`). A body sent without a
Content-Type is taken as JSON, as the spec says bodies are. A body cut short (the
connection closed before its last byte) reaches nothing: no answer is sent.
"""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from workbench.sandbox.context import request_headers, request_state
from workbench.sandbox.errors import error_response
from workbench.spec import limits

__all__ = ["BodyLimits", "replaying"]


class _BodyTooLarge(Exception):
    pass


class _ClientGone(Exception):
    """The connection closed before the body was complete (the client left, or the
    server closed it: a body too slow, `workbench.sandbox.edge.headguard`)."""


def replaying(body: bytes, receive: Receive) -> Receive:
    """``receive`` for the wrapped application: the body already read, then the rest."""
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay


async def _read_body(receive: Receive) -> bytes:
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise _ClientGone
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limits.MAX_BODY_BYTES:
            raise _BodyTooLarge
        chunks.append(chunk)
        if not message.get("more_body", False):
            break
    return b"".join(chunks)


def _carries_nul(scope: Scope, body: bytes) -> bool:
    """Whether a NUL would reach a text field (PostgreSQL cannot store one; SQLite follows)."""
    query = bytes(scope.get("query_string", b""))
    return "\x00" in str(scope["path"]) or b"%00" in query or b"\\u0000" in body or b"\x00" in body


class BodyLimits:
    """Read the body once (`RequestState.body`); refuse it too large or with a NUL.

    Args:
        app: the wrapped application.
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        state = request_state(scope)
        headers = request_headers(scope)
        declared = headers.get(b"content-length", b"")
        try:
            if declared.isdigit() and int(declared) > limits.MAX_BODY_BYTES:
                raise _BodyTooLarge
            body = await _read_body(receive)
        except _BodyTooLarge:
            message = f"request body is larger than {limits.MAX_BODY_BYTES} bytes"
            await error_response("SVC-GW-4013", message, state.request_id)(scope, receive, send)
            return
        except _ClientGone:  # nobody to answer, and half a body is no request
            return
        if _carries_nul(scope, body):
            message = "NUL characters are not accepted in the path, query string or body"
            await error_response("SVC-GW-4000", message, state.request_id)(scope, receive, send)
            return
        state.body = body
        if body and b"content-type" not in headers:
            # The spec says bodies are JSON; a client that omits the header still means it.
            scope["headers"] = [*scope["headers"], (b"content-type", b"application/json")]
        await self.app(scope, replaying(body, receive), send)
