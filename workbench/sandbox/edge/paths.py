"""`CanonicalPath`: an API path loses its trailing slash before anything reads it.

The spec's canonical string has "no trailing slash", so a client that signs it right
and sends ``/v1/subscriptions/`` must be verified and answered as
``/v1/subscriptions``: under ``/v1/`` and ``/sandbox/`` the slash is dropped from
``path`` and ``raw_path`` (never redirected). Static pages (``/docs/``) keep theirs.
"""

from __future__ import annotations

from starlette.types import ASGIApp, Receive, Scope, Send

__all__ = ["API_PREFIXES", "CanonicalPath", "canonicalise_path"]

#: Where the signed API lives: paths here lose a trailing slash before anything else.
API_PREFIXES = ("/v1/", "/sandbox/")


def canonicalise_path(scope: Scope) -> None:
    """Drop a trailing slash from an API path in place (``path`` and ``raw_path``)."""
    path = str(scope["path"])
    if len(path) < 2 or not path.endswith("/") or not path.startswith(API_PREFIXES):
        return
    scope["path"] = path.rstrip("/") or "/"
    raw = scope.get("raw_path")
    if raw:
        scope["raw_path"] = bytes(raw).rstrip(b"/") or b"/"


class CanonicalPath:
    """Canonicalise the path (`canonicalise_path`), then pass the request on.

    Args:
        app: the wrapped application.
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            canonicalise_path(scope)
        await self.app(scope, receive, send)
