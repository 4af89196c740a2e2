"""`DocsHeaders`: a Content-Security-Policy on the Swagger UI pages under ``/docs``.

Swagger UI's page starts itself with one inline script; the policy allows that script
by its SHA-256 (computed from the page as served, so it follows the page) and no other
inline script, loads code only from the sandbox, and lets only pages on this machine
frame it (`FRAME_ANCESTORS`, as for the hosted pages).
"""

from __future__ import annotations

import base64
import hashlib
import re

from starlette.datastructures import MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from workbench.sandbox.framing import FRAME_ANCESTORS

__all__ = ["DOCS_PREFIX", "DocsHeaders", "docs_policy"]

DOCS_PREFIX = "/docs"

_INLINE_SCRIPT = re.compile(rb"<script>(.*?)</script>", re.DOTALL)


def docs_policy(html: bytes) -> str:
    """The Content-Security-Policy for one Swagger UI page (its inline scripts hashed).

    Swagger UI sets ``style`` attributes from its script, hence ``'unsafe-inline'``
    for styles only; the "Try it out" requests go to the sandbox itself.
    """
    hashes = " ".join(
        "'sha256-" + base64.b64encode(hashlib.sha256(s).digest()).decode() + "'"
        for s in _INLINE_SCRIPT.findall(html)
    )
    return (
        f"default-src 'none'; script-src 'self' {hashes}; style-src 'self' 'unsafe-inline'; "
        "img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'self'; "
        f"frame-ancestors {FRAME_ANCESTORS}"
    ).replace("'self' ;", "'self';")


class DocsHeaders:
    """Add the policy (and ``nosniff``, ``no-referrer``) to every answer under ``/docs``.

    An HTML answer is held whole (a page of about 1 KB) so its scripts can be hashed;
    the static assets pass through as they come.

    Args:
        app: the wrapped application.
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = str(scope.get("path", ""))
        if scope["type"] != "http" or not (
            path == DOCS_PREFIX or path.startswith(DOCS_PREFIX + "/")
        ):
            await self.app(scope, receive, send)
            return
        start: Message | None = None
        chunks: list[bytes] = []

        async def send_with_policy(message: Message) -> None:
            nonlocal start
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                headers["X-Content-Type-Options"] = "nosniff"
                headers["Referrer-Policy"] = "no-referrer"
                if not headers.get("content-type", "").startswith("text/html"):
                    headers["Content-Security-Policy"] = docs_policy(b"")
                    await send(message)
                    return
                start = message  # held until the page is whole
                return
            if message["type"] != "http.response.body" or start is None:
                await send(message)
                return
            chunks.append(message.get("body", b""))
            if message.get("more_body", False):
                return
            body = b"".join(chunks)
            MutableHeaders(scope=start)["Content-Security-Policy"] = docs_policy(body)
            await send(start)
            await send({"type": "http.response.body", "body": body})

        await self.app(scope, receive, send_with_policy)
