"""The pytest plugin: the sandbox and signed clients as fixtures, for your own test suite.

Installed with the ``testing`` extra (``pip install '.[testing]'`` from a checkout) and
loaded by pytest by itself (a ``pytest11`` entry point): nothing to add to ``conftest.py``.

``workbench_sandbox``
    One sandbox for the test session, on a free 127.0.0.1 port, its SQLite database
    in a temporary folder. Its reconciler (renewals, refund settlement, webhook
    deliveries) runs only when a test asks, so no outcome depends on when a background
    pass happens. Override ``workbench_sandbox_options`` to configure it.
``workbench_client`` / ``workbench_async_client``
    A `Client` / `AsyncClient` signed with the demo merchant's keys and pointed at the
    sandbox; the merchant's data is reset before each test.
``workbench_clock``
    A `SandboxClock`: ``workbench_clock.advance(days=31)`` moves the business clock.
``workbench_fail_next``
    A `FailNext`: ``workbench_fail_next("500")`` fails the merchant's next request.
``workbench_webhooks``
    A `WebhookCollector` the store's webhooks are pointed at while the test runs;
    ``workbench_webhooks.wait_for("payment.captured")`` delivers and returns them.
``workbench_env``
    ``WORKBENCH_BASE_URL``, ``WORKBENCH_API_KEY`` and ``WORKBENCH_SECRET_KEY`` set to
    the sandbox's for the test (``WORKBENCH_ENVIRONMENT`` unset), for code that builds
    its own ``Client()``.
``workbench_fixtures``
    Runs a scenario file (`workbench.scenarios`) with ``workbench_client``:
    ``workbench_fixtures("refund.yaml")`` returns the named steps' results
    (``["refund"]["id"]``). A shipped example runs by name (``"refund-in-flight"``).

Every name starts with ``workbench_``, so none collides with a project's own fixtures.
Loading the plugin imports nothing but pytest and the table of `workbench.testing`'s
names: each fixture imports what it needs when it first runs, so a test run that uses
none of them pays nothing for it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from workbench._client import AsyncClient, Client
    from workbench.sandbox import SandboxServer
    from workbench.testing import FailNext, SandboxClock, WebhookCollector

__all__ = [
    "workbench_async_client",
    "workbench_client",
    "workbench_clock",
    "workbench_env",
    "workbench_fail_next",
    "workbench_fixtures",
    "workbench_sandbox",
    "workbench_sandbox_options",
    "workbench_webhooks",
]


@pytest.fixture(scope="session")
def workbench_sandbox_options() -> dict[str, Any]:
    """`SandboxConfig` fields for ``workbench_sandbox``; override it in ``conftest.py``.

    Example: ``return {"latency_ms": 20, "rate_limit_per_second": 0}``.
    """
    return {}


@pytest.fixture(scope="session")
def workbench_sandbox(
    tmp_path_factory: pytest.TempPathFactory, workbench_sandbox_options: dict[str, Any]
) -> Iterator[SandboxServer]:
    """One sandbox for the session: a free port, SQLite in a temporary folder."""
    from workbench.testing import running_sandbox

    options = {"run_reconciler_in_background": False, **workbench_sandbox_options}
    folder = tmp_path_factory.mktemp("workbench-sandbox")
    with running_sandbox(db_dir=folder, **options) as server:
        yield server


@pytest.fixture
def workbench_client(workbench_sandbox: SandboxServer) -> Iterator[Client]:
    """A `Client` for the sandbox's demo merchant, whose data is reset first."""
    from workbench.testing import client_for

    with client_for(workbench_sandbox) as client:
        client.sandbox.reset()
        yield client


@pytest.fixture
async def workbench_async_client(workbench_sandbox: SandboxServer) -> AsyncIterator[AsyncClient]:
    """An `AsyncClient` for the demo merchant, whose data is reset first.

    An async fixture: the test needs an async runner (``@pytest.mark.anyio`` with
    anyio's plugin, which comes with httpx2, or pytest-asyncio).
    """
    from workbench._client import AsyncClient

    config = workbench_sandbox.config
    async with AsyncClient(config.api_key, config.secret_key, workbench_sandbox.base_url) as client:
        await client.sandbox.reset()
        yield client


@pytest.fixture
def workbench_clock(workbench_client: Client) -> SandboxClock:
    """The demo merchant's business clock (reset to the present with its data)."""
    from workbench.testing import SandboxClock

    return SandboxClock(workbench_client)


@pytest.fixture
def workbench_fail_next(workbench_client: Client) -> FailNext:
    """Makes the demo merchant's next request fail: ``workbench_fail_next("429")``."""
    from workbench.testing import FailNext

    return FailNext(workbench_client)


@pytest.fixture
def workbench_webhooks(workbench_client: Client) -> Iterator[WebhookCollector]:
    """The store's webhooks, received and verified on a local port during the test."""
    from workbench.testing import WebhookCollector

    with WebhookCollector(workbench_client) as collector:
        yield collector


@pytest.fixture
def workbench_env(workbench_sandbox: SandboxServer, monkeypatch: pytest.MonkeyPatch) -> str:
    """Point ``WORKBENCH_*`` at the sandbox for the test; returns its base URL."""
    from workbench.config import ENV_API_KEY, ENV_BASE_URL, ENV_ENVIRONMENT, ENV_SECRET_KEY

    config = workbench_sandbox.config
    monkeypatch.setenv(ENV_BASE_URL, workbench_sandbox.base_url)
    monkeypatch.setenv(ENV_API_KEY, config.api_key)
    monkeypatch.setenv(ENV_SECRET_KEY, config.secret_key)
    monkeypatch.delenv(ENV_ENVIRONMENT, raising=False)  # guessed from the base URL: local
    return workbench_sandbox.base_url


@pytest.fixture
def workbench_fixtures(
    workbench_client: Client, request: pytest.FixtureRequest
) -> Callable[[str | Path], dict[str, dict[str, Any]]]:
    """Runs a scenario file for the test: ``workbench_fixtures("file.yaml")``.

    The file is found by a shipped example's name, then beside the test's module, then
    as given. It is checked whole before its first step runs; the call returns the named
    steps' results, by name.

    Raises (from the call):
        workbench.scenarios.ScenarioError: the file cannot be run (file, line, step).
        workbench.scenarios.StepFailed: a step the sandbox refused, with its envelope.
    """
    from workbench.scenarios import EXAMPLES, load_scenario, run_scenario

    def run(file: str | Path) -> dict[str, dict[str, Any]]:
        beside = Path(request.path).parent / file
        path = EXAMPLES.get(str(file)) or (beside if beside.is_file() else Path(file))
        return run_scenario(workbench_client, load_scenario(path))

    return run
