"""The parity tests' proxies: ASGI apps that pass every request to a sandbox and back.

`proxy_app` builds one; with ``deviate=True`` it makes the four changes of `DEVIATIONS`
(the report must name each), with ``control_routes=False`` it answers 404 for
``/sandbox/…`` as the provider's service would. `serving` runs it on a free port.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx2
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from workbench.sandbox import SandboxConfig, SandboxServer

__all__ = ["DEVIATIONS", "deviation", "proxy_app", "serving"]

#: Response headers not copied from upstream (the proxy's server sets its own).
_HOP = {"content-length", "content-encoding", "transfer-encoding", "connection", "date", "server"}
_METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"]

#: The four changes the deviating proxy makes, as the report must name them:
#: (flow, request, kind, field).
DEVIATIONS = [
    ("checkout", "GET /sandbox/events (events read by parity)", "item only in A", "items[1]"),
    ("portal", "POST /v1/public/subscriptions/[redacted]/update-card-session", "HTTP status",
     "HTTP status"),
    ("quickstart", "POST /v1/payments/card", "money", "netAmount"),
    ("subscriptions", "POST /v1/subscriptions/<sub:1>/charge-now", "field name", "checkAt"),
]  # fmt: skip


def deviation(body: Any, method: str, path: str, status: int) -> tuple[int, Any]:
    """The deviating target's answer: four changes, each made once per run of the flows.

    - the buyer portal's update-card session answers 200 instead of 201;
    - charge-now's receipt calls ``checkAt`` ``pollAt``;
    - the events list loses its ``session.completed`` events (the checkout flow's one);
    - the first signed charge of the quickstart (12 500 kuruş, captured at once) is
      answered with a ``netAmount`` one kuruş more.
    """
    if method == "POST" and path.endswith("/update-card-session") and status == 201:
        return 200, body
    if method == "POST" and path.endswith("/charge-now") and isinstance(body, dict):
        return status, {("pollAt" if k == "checkAt" else k): v for k, v in body.items()}
    if method == "GET" and path == "/sandbox/events" and isinstance(body, dict):
        items = [e for e in body["items"] if e.get("type") != "session.completed"]
        return status, {**body, "items": items}
    if (
        method == "POST"
        and path == "/v1/payments/card"
        and status == 201
        and isinstance(body, dict)
        and body.get("amount") == 12_500
        and body.get("status") == "captured"
    ):
        return status, {**body, "netAmount": body["netAmount"] + 1}
    return status, body


def proxy_app(upstream: str, *, deviate: bool, control_routes: bool = True) -> Starlette:
    """An ASGI app passing every request to ``upstream`` and its answer back.

    Args:
        upstream: the sandbox's base URL.
        deviate: apply `deviation` to the answers.
        control_routes: when ``False``, ``/sandbox/…`` answers 404 in the service's
            envelope without reaching the sandbox, as the provider's service would.
    """
    state: dict[str, httpx2.AsyncClient] = {}

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        async with httpx2.AsyncClient(base_url=upstream, timeout=30) as client:
            state["client"] = client
            yield

    async def forward(request: Request) -> Response:
        path = request.url.path
        if not control_routes and path.startswith("/sandbox/"):
            body = {"code": "SVC-GW-4004", "message": "no such route", "requestId": None}
            return JSONResponse(body, status_code=404)
        headers = [(k, v) for k, v in request.headers.raw if k.lower() not in (b"host",
                   b"content-length")]  # fmt: skip
        answer = await state["client"].request(
            request.method,
            path,
            params=request.url.query or None,
            content=await request.body(),
            headers=headers,
        )
        status, content = answer.status_code, answer.content
        if deviate and answer.headers.get("content-type", "").startswith("application/json"):
            status, body = deviation(answer.json(), request.method, path, status)
            content = json.dumps(body).encode()
        kept = [(k, v) for k, v in answer.headers.multi_items() if k.lower() not in _HOP]
        response = Response(content, status_code=status)
        for name, value in kept:
            response.headers.append(name, value)
        return response

    return Starlette(routes=[Route("/{path:path}", forward, methods=_METHODS)], lifespan=lifespan)


@contextlib.contextmanager
def serving(app: Starlette) -> Iterator[str]:
    """Serve ``app`` on a free 127.0.0.1 port; its base URL."""
    with SandboxServer(SandboxConfig(db_url="sqlite://"), app=app) as server:  # type: ignore[arg-type]
        yield server.base_url
