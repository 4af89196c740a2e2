"""Fixtures of the parity tests: one run of the flows per target, shared by every test.

The targets: a sandbox on a temporary SQLite file, one on a PostgreSQL database of its
own (skipped, printing why, when no server answers), and two ASGI proxies in front of
the SQLite one: `DeviatingProxy`, which changes exactly four things on the way back,
and one that answers 404 for the control routes, as the provider's service would.
Each run happens once for the session; the tests compare the recordings.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from tests.postgres import database_url
from workbench.config import DEFAULT_API_KEY, DEFAULT_SECRET_KEY, Settings
from workbench.parity import FlowRecorder, Recording, Target
from workbench.sandbox import SandboxConfig, SandboxServer
from workbench.testing import running_sandbox

#: Response headers not copied from upstream (the proxy's server sets its own).
_HOP = {"content-length", "content-encoding", "transfer-encoding", "connection", "date", "server"}
_METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"]

#: The four changes `DeviatingProxy` makes, as the report must name them:
#: (flow, request, kind, field, A, B).
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
    state: dict[str, httpx.AsyncClient] = {}

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        async with httpx.AsyncClient(base_url=upstream, timeout=30) as client:
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


@dataclass
class Seen:
    """The secrets that went over the wire during a run: the test scans files for them."""

    values: set[str] = field(default_factory=set)


class SpyTransport(httpx.BaseTransport):
    """Sends through a real transport and keeps every signature and bearer it sees."""

    def __init__(self, seen: Seen) -> None:
        self._inner = httpx.HTTPTransport()
        self._seen = seen

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        signature = request.headers.get("X-Signature")
        if signature:
            self._seen.values.add(signature)
        response = self._inner.handle_request(request)
        response.read()
        try:
            body = response.json()
        except ValueError:
            return response
        for item in _walk(body):
            if isinstance(item, dict):
                for key in ("pares", "publicHash", "webhookSecret", "number"):
                    if isinstance(item.get(key), str) and len(item[key]) >= 8:
                        self._seen.values.add(item[key])
        return response

    def close(self) -> None:
        self._inner.close()


def _walk(value: Any) -> Iterator[Any]:
    yield value
    if isinstance(value, dict):
        for item in value.values():
            yield from _walk(item)
    elif isinstance(value, list):
        for item in value:
            yield from _walk(item)


def run_flows(base_url: str, name: str, seen: Seen | None = None) -> Recording:
    """Every flow against ``base_url`` with the demo keys, as `workbench parity` runs them."""
    target = Target(name, Settings(base_url=base_url, api_key=DEFAULT_API_KEY,
                                   secret_key=DEFAULT_SECRET_KEY))  # fmt: skip
    factory = (lambda: SpyTransport(seen)) if seen is not None else None
    recorder = FlowRecorder(target, transport=factory)
    from workbench.flows import FLOWS

    return recorder.recording(recorder.run(spec) for spec in FLOWS.values())


@pytest.fixture(scope="session")
def sqlite_sandbox(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SandboxServer]:
    """A sandbox on a temporary SQLite file; the flows tick its reconciler themselves."""
    db = tmp_path_factory.mktemp("parity-sqlite") / "sandbox.db"
    with running_sandbox(db_url=f"sqlite:///{db}", run_reconciler_in_background=False) as server:
        yield server


@pytest.fixture(scope="session")
def secrets_seen() -> Seen:
    """Signatures, bearers, webhook secrets and card numbers seen on the wire by the runs."""
    return Seen({DEFAULT_SECRET_KEY})


@pytest.fixture(scope="session")
def sqlite_run(sqlite_sandbox: SandboxServer, secrets_seen: Seen) -> Recording:
    """The flows on the SQLite sandbox (the wire watched for secrets)."""
    return run_flows(sqlite_sandbox.base_url, "SQLite sandbox", secrets_seen)


@pytest.fixture(scope="session")
def postgres_run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Recording]:
    """The flows on a sandbox on a PostgreSQL database of its own."""
    with database_url("postgres", tmp_path_factory.mktemp("parity-pg")) as url:
        config = {"db_url": url, "run_reconciler_in_background": False}
        with running_sandbox(**config) as server:
            yield run_flows(server.base_url, "PostgreSQL sandbox")


@pytest.fixture(scope="session")
def deviating_url(sqlite_sandbox: SandboxServer) -> Iterator[str]:
    """The deviating proxy in front of the SQLite sandbox."""
    with serving(proxy_app(sqlite_sandbox.base_url, deviate=True)) as url:
        yield url


@pytest.fixture(scope="session")
def deviating_run(deviating_url: str, sqlite_run: Recording, secrets_seen: Seen) -> Recording:
    """The flows through the deviating proxy (after the plain SQLite run)."""
    return run_flows(deviating_url, "deviating proxy", secrets_seen)


@pytest.fixture(scope="session")
def without_control_run(sqlite_sandbox: SandboxServer, sqlite_run: Recording) -> Recording:
    """The flows through a proxy that has no control routes, like the provider's service."""
    app = proxy_app(sqlite_sandbox.base_url, deviate=False, control_routes=False)
    with serving(app) as url:
        return run_flows(url, "no control routes")


@pytest.fixture
def files(tmp_path: Path) -> Path:
    """A folder for the test's recordings and reports."""
    folder = tmp_path / "parity"
    folder.mkdir()
    return folder
