"""Fixtures of the parity tests: one run of the flows per target, shared by every test.

The targets: a sandbox on a temporary SQLite file, one on a PostgreSQL database of its
own (skipped, printing why, when no server answers), and two ASGI proxies in front of
the SQLite one (``proxy.py``): one that changes exactly four things on the way back, and
one that answers 404 for the control routes, as the provider's service would. Each run
(``runs.py``) happens once for the session; the tests compare the recordings.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.parity.proxy import proxy_app, serving
from tests.parity.runs import Seen, run_flows
from tests.postgres import database_url
from workbench.config import DEFAULT_SECRET_KEY
from workbench.parity import Recording
from workbench.sandbox import SandboxServer
from workbench.testing import running_sandbox


@pytest.fixture(scope="session")
def sqlite_sandbox(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SandboxServer]:
    """A sandbox on a temporary SQLite file; the flows tick its reconciler themselves."""
    folder = tmp_path_factory.mktemp("parity-sqlite")
    with running_sandbox(db_dir=folder, run_reconciler_in_background=False) as server:
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
    with (
        database_url("postgres", tmp_path_factory.mktemp("parity-pg")) as url,
        running_sandbox(db_url=url, run_reconciler_in_background=False) as server,
    ):
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
