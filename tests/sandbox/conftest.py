"""Fixtures: a real sandbox HTTP server per storage backend, and signed clients for it.

Every test talks HTTP to a `SandboxServer`. The suite runs on SQLite (a WAL file in a
temporary directory) and, when PostgreSQL answers on 127.0.0.1:5432, again on a
database of its own that is dropped afterwards. The folders below this one (one per
feature package of `workbench.sandbox`) use the same fixtures; a folder's own conftest
adds what only its tests need. Every sandbox here starts through
`workbench.testing.running_sandbox`, the helper users' own suites start theirs with, so
the suite exercises it. What the tests import (signed clients, request bodies,
the envelope check) is in the modules beside this one.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest

from tests.postgres import database_url
from tests.sandbox.clients import signed_client
from tests.sandbox.workers import two_workers
from workbench.sandbox import OTHER_API_KEY, OTHER_SECRET_KEY, SandboxServer
from workbench.testing import running_sandbox


@pytest.fixture(scope="session", params=["sqlite", "postgres"])
def db_url(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    """One database per backend for the whole session."""
    with database_url(request.param, tmp_path_factory.mktemp("sandbox")) as url:
        yield url


@pytest.fixture(scope="session")
def server(db_url: str) -> Iterator[SandboxServer]:
    """The sandbox on a free port; the reconciler runs only when a test asks.

    Its per-address limit on unsigned routes is off: every test of a worker reaches it
    from 127.0.0.1, so the hosted pages' and the ACS page's count would depend on which
    tests ran before; the limit is tested on sandboxes of its own
    (tests/sandbox/edge/test_ratelimit_address.py)."""
    with running_sandbox(
        db_url=db_url, run_reconciler_in_background=False, public_rate_limit_per_second=0
    ) as running:
        yield running


@pytest.fixture(params=["sqlite", "postgres"])
def own_db(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """The URL of a database of this test's own, once per backend, dropped afterwards."""
    with database_url(request.param, tmp_path) as url:
        yield url


@pytest.fixture
def sandbox_with(own_db: str) -> Iterator[Callable[..., SandboxServer]]:
    """Start a sandbox with the given `SandboxConfig` settings on ``own_db`` (so once per
    backend); the reconciler runs only when asked unless the settings say otherwise.
    Every one started is stopped afterwards; ``server.stop()`` stops one sooner (a
    restart: the next one started finds the same database)."""
    with contextlib.ExitStack() as stack:

        def _start(**settings: Any) -> SandboxServer:
            options = {"run_reconciler_in_background": False, **settings}
            return stack.enter_context(running_sandbox(db_url=own_db, **options))

        yield _start


@pytest.fixture
def client(server: SandboxServer) -> Iterator[httpx2.Client]:
    """A client signed with the demo merchant's keys."""
    with signed_client(server.base_url) as c:
        yield c


@pytest.fixture
def other_client(server: SandboxServer) -> Iterator[httpx2.Client]:
    """A client signed with the second merchant's keys."""
    with signed_client(server.base_url, OTHER_API_KEY, OTHER_SECRET_KEY) as c:
        yield c


@pytest.fixture
def anon(server: SandboxServer) -> Iterator[httpx2.Client]:
    """An unsigned client (plain HTTP: no certificate store, as in `signed_client`)."""
    with httpx2.Client(base_url=server.base_url, timeout=30, verify=False) as c:
        yield c


@pytest.fixture(scope="session")
def _quiet_two_workers(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Callable[[str], tuple[str, str, int]]]:
    """A two-worker sandbox without reconciler per backend, started on first use and
    shared by every module of this process that asks for one (their tests reset what
    they read, or use ids of their own): each start of two workers costs seconds."""
    started: dict[str, tuple[str, str, int]] = {}
    with contextlib.ExitStack() as stack:

        def get(backend: str) -> tuple[str, str, int]:
            if backend not in started:
                folder = tmp_path_factory.mktemp("workers")
                url = stack.enter_context(database_url(backend, folder))
                base, pid = stack.enter_context(two_workers(url, folder, reconciler=False))
                started[backend] = (base, url, pid)
            return started[backend]

        yield get


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def workers(
    request: pytest.FixtureRequest,
    tmp_path_factory: pytest.TempPathFactory,
    _quiet_two_workers: Callable[[str], tuple[str, str, int]],
) -> Iterator[tuple[str, str, int]]:
    """(base URL, database URL, parent pid) of a two-worker sandbox on its own database,
    per backend: one of the test module's own, or, for a module that sets
    ``RECONCILER = False``, the one `_quiet_two_workers` shares."""
    if not Path("/proc").is_dir():
        pytest.skip("counting worker processes reads /proc (Linux only)")
    # A module that names a backend in START_UNDER_LOAD has that backend's sandbox
    # started on a busy machine, one that sets RECONCILER = False has it started without
    # the reconciler.
    under_load = getattr(request.module, "START_UNDER_LOAD", None) == request.param
    reconciler = getattr(request.module, "RECONCILER", True)
    if not (under_load or reconciler):
        yield _quiet_two_workers(request.param)
        return
    folder = tmp_path_factory.mktemp("workers")
    with (
        database_url(request.param, folder) as url,
        two_workers(url, folder, under_load=under_load, reconciler=reconciler) as (base, pid),
    ):
        yield base, url, pid
