"""Fixtures: the sandbox HTTP server per storage backend and signed clients for it.

The clients are the sandbox suite's (`tests.sandbox.clients`); each test here starts from
a reset merchant (no objects, clock at the wall clock). The routes the tests call and the
clock they move are in ``api.py`` and ``clock.py`` beside this one.
"""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from tests.postgres import database_url
from tests.sandbox.clients import signed_client
from workbench.sandbox import OTHER_API_KEY, OTHER_SECRET_KEY, SandboxConfig, SandboxServer


@pytest.fixture(scope="session", params=["sqlite", "postgres"])
def db_url(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    """One database per backend for the whole session (PostgreSQL when reachable)."""
    with database_url(request.param, tmp_path_factory.mktemp("subs")) as url:
        yield url


@pytest.fixture(scope="session")
def server(db_url: str) -> Iterator[SandboxServer]:
    """The sandbox on a free port; the reconciler runs only when a test asks."""
    config = SandboxConfig(
        db_url=db_url, run_reconciler_in_background=False, rate_limit_per_second=0
    )
    with SandboxServer(config) as running:
        yield running


@pytest.fixture
def client(server: SandboxServer) -> Iterator[httpx.Client]:
    """The demo merchant, reset before the test."""
    with signed_client(server.base_url) as c:
        assert c.post("/sandbox/reset", json={}).status_code == 200
        yield c


@pytest.fixture
def other_client(server: SandboxServer) -> Iterator[httpx.Client]:
    """The second merchant, reset before the test."""
    with signed_client(server.base_url, OTHER_API_KEY, OTHER_SECRET_KEY) as c:
        assert c.post("/sandbox/reset", json={}).status_code == 200
        yield c


@pytest.fixture
def anon(server: SandboxServer) -> Iterator[httpx.Client]:
    """An unsigned client (the buyer's browser)."""
    with httpx.Client(base_url=server.base_url, timeout=30) as c:
        yield c
