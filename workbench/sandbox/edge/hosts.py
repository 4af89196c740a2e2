"""Pure ASGI middleware: answer only requests addressed to a host this sandbox serves.

The ``Host`` header is not signed. Public addresses (``checkoutUrl``, redirects) are
built from the configured public URL or the bound address, never from it; this guard
also refuses a request whose ``Host`` names another server (DNS rebinding, a proxy
passing anything through), in the service's error envelope.
"""

from __future__ import annotations

from collections.abc import Iterable
from urllib.parse import urlsplit

from starlette.types import ASGIApp, Receive, Scope, Send

from workbench.sandbox.context import request_header
from workbench.sandbox.errors import error_response, request_id_of

__all__ = ["LOOPBACK_HOSTS", "HostGuard", "allowed_hosts"]

#: Names of this machine's own loopback interface, always served.
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1")


def allowed_hosts(public_base_url: str | None, extra: Iterable[str] = ()) -> frozenset[str]:
    """The host names served: loopback, the public URL's host, and ``extra``."""
    names = {*LOOPBACK_HOSTS, *(name.lower() for name in extra)}
    if public_base_url:
        host = urlsplit(public_base_url).hostname
        if host:
            names.add(host.lower())
    return frozenset(names)


def _hostname(header: str) -> str:
    if header.startswith("["):  # [::1]:8765
        return header[1 : header.find("]")].lower()
    return header.rsplit(":", 1)[0].lower() if header.count(":") == 1 else header.lower()


class HostGuard:
    """Refuse (400 SVC-GW-4000) a request whose ``Host`` is not one of ``hosts``.

    Args:
        app: the wrapped application.
        hosts: host names served (``"*"`` among them turns the guard off).
    """

    def __init__(self, app: ASGIApp, hosts: Iterable[str]) -> None:
        self.app = app
        self.hosts = frozenset(hosts)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or "*" in self.hosts:
            await self.app(scope, receive, send)
            return
        header = request_header(scope, b"host") or ""
        if header and _hostname(header) not in self.hosts:
            message = "this sandbox does not serve that Host; use its public URL"
            response = error_response("SVC-GW-4000", message, request_id_of(scope))
            await response(scope, receive, send)
            return
        await self.app(scope, receive, send)
