"""The pytest plugin: the sandbox and signed clients as fixtures, for your own test suite.

Installed with the ``testing`` extra (``pip install '.[testing]'`` from a checkout) and
loaded by pytest by itself (a ``pytest11`` entry point): nothing to add to ``conftest.py``.

``workbench_sandbox``
    One sandbox for the test session, on a free 127.0.0.1 port, its SQLite database
    in a temporary folder; with pytest-xdist, one for all the workers of the run. Its
    reconciler (renewals, refund settlement, webhook deliveries) runs only when a test
    asks, so no outcome depends on when a background pass happens. Override
    ``workbench_sandbox_options`` to configure it. With ``--workbench-url URL`` (or
    ``WORKBENCH_SANDBOX_URL``) the fixtures use a sandbox already running there (a
    team's, or one several runs share) and start none; ``--workbench-admin-token`` (or
    ``WORKBENCH_SANDBOX_ADMIN_TOKEN``) is its admin token if it is reachable beyond
    loopback.
``workbench_merchant``
    A merchant of the test's own, made on the sandbox before the test and deleted
    after it (`MerchantCredentials`): nothing a test does touches another's data or
    clock, so tests, workers and whole runs share one sandbox.
``workbench_client`` / ``workbench_async_client``
    A `Client` / `AsyncClient` signed with the test's merchant's keys and pointed at
    the sandbox.
``workbench_clock``
    A `SandboxClock`: ``workbench_clock.advance(days=31)`` moves the test's merchant's
    business clock.
``workbench_fail_next``
    A `FailNext`: ``workbench_fail_next("500")`` fails the merchant's next request.
``workbench_webhooks``
    A `WebhookCollector` the store's webhooks are pointed at while the test runs;
    ``workbench_webhooks.wait_for("payment.captured")`` delivers and returns them.
``workbench_env``
    ``WORKBENCH_BASE_URL``, ``WORKBENCH_API_KEY`` and ``WORKBENCH_SECRET_KEY`` set to
    the sandbox's and the test's merchant's for the test (``WORKBENCH_ENVIRONMENT``
    unset), for code that builds its own ``Client()``.
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

import os
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from workbench._client import AsyncClient, Client
    from workbench.models import MerchantCredentials
    from workbench.sandbox import SandboxServer
    from workbench.testing import FailNext, SandboxClock, WebhookCollector
    from workbench.testing.sandbox import ExternalSandbox

__all__ = [
    "workbench_async_client",
    "workbench_client",
    "workbench_clock",
    "workbench_env",
    "workbench_fail_next",
    "workbench_fixtures",
    "workbench_merchant",
    "workbench_sandbox",
    "workbench_sandbox_options",
    "workbench_webhooks",
]


#: Where a sandbox already running is named when ``--workbench-url`` is not given.
ENV_SANDBOX_URL = "WORKBENCH_SANDBOX_URL"
#: Its admin token, when ``--workbench-admin-token`` is not given.
ENV_ADMIN_TOKEN = "WORKBENCH_SANDBOX_ADMIN_TOKEN"
#: Retries of a merchant's making: it is counted per client address, and many
#: workers making one per test may meet the limit (429, retried after Retry-After).
_MAKING_RETRIES = 6


def pytest_addoption(parser: pytest.Parser) -> None:
    """``--workbench-url`` and ``--workbench-admin-token``."""
    group = parser.getgroup("workbench", "Payments Workbench sandbox")
    group.addoption(
        "--workbench-url",
        default=None,
        help=f"Use the sandbox running at this URL instead of starting one (or set "
        f"{ENV_SANDBOX_URL}); each test still gets a merchant of its own.",
    )
    group.addoption(
        "--workbench-admin-token",
        default=None,
        help=f"That sandbox's admin token, if it is reachable beyond loopback (or set "
        f"{ENV_ADMIN_TOKEN}).",
    )


def _option(config: pytest.Config, name: str, env: str) -> str | None:
    try:
        given = config.getoption(name)
    except ValueError:  # the plugin's options are not registered (fixtures imported)
        given = None
    return str(given) if given else os.environ.get(env) or None


@pytest.fixture(scope="session")
def workbench_sandbox_options() -> dict[str, Any]:
    """`SandboxConfig` fields for ``workbench_sandbox``; override it in ``conftest.py``.

    Example: ``return {"latency_ms": 20, "rate_limit_per_second": 0}``.
    """
    return {}


@pytest.fixture(scope="session")
def workbench_sandbox(
    request: pytest.FixtureRequest,
    tmp_path_factory: pytest.TempPathFactory,
    workbench_sandbox_options: dict[str, Any],
) -> Iterator[SandboxServer | ExternalSandbox]:
    """The session's sandbox: the one at ``--workbench-url``, else one started on a free
    port (SQLite in a temporary folder), shared by every xdist worker of the run."""
    from workbench.testing.sandbox import ExternalSandbox, running_sandbox, shared_sandbox

    token = _option(request.config, "workbench_admin_token", ENV_ADMIN_TOKEN)
    url = _option(request.config, "workbench_url", ENV_SANDBOX_URL)
    if url:
        yield ExternalSandbox(url.rstrip("/"), token)
        return
    options = {"run_reconciler_in_background": False, **workbench_sandbox_options}
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    if worker:  # every worker's base temp is a folder of the run's own
        root = tmp_path_factory.getbasetemp().parent
        with shared_sandbox(root, worker, **options) as shared:
            yield shared
        return
    folder = tmp_path_factory.mktemp("workbench-sandbox")
    with running_sandbox(db_dir=folder, **options) as server:
        yield server


@pytest.fixture
def workbench_merchant(
    request: pytest.FixtureRequest, workbench_sandbox: SandboxServer | ExternalSandbox
) -> Iterator[MerchantCredentials[Client]]:
    """A merchant of the test's own (keys, store, customers, clock), deleted afterwards."""
    from workbench._client import Client

    token = getattr(workbench_sandbox, "admin_token", None)
    name = f"pytest {request.node.nodeid}"[:100]
    with Client(base_url=workbench_sandbox.base_url, max_retries=_MAKING_RETRIES) as maker:
        made = maker.sandbox.create_merchant(name=name, admin_token=token)
        yield made
        made.client.sandbox.delete_merchant(made.merchant_id)


@pytest.fixture
def workbench_client(
    workbench_sandbox: SandboxServer | ExternalSandbox,
    workbench_merchant: MerchantCredentials[Client],
) -> Iterator[Client]:
    """A `Client` for the test's own merchant."""
    from workbench._client import Client

    m = workbench_merchant
    with Client(m.api_key, m.secret_key, workbench_sandbox.base_url) as client:
        yield client


@pytest.fixture
async def workbench_async_client(
    workbench_sandbox: SandboxServer | ExternalSandbox,
    workbench_merchant: MerchantCredentials[Client],
) -> AsyncIterator[AsyncClient]:
    """An `AsyncClient` for the test's own merchant.

    An async fixture: the test needs an async runner (``@pytest.mark.anyio`` with
    anyio's plugin, which comes with httpx2, or pytest-asyncio).
    """
    from workbench._client import AsyncClient

    m = workbench_merchant
    async with AsyncClient(m.api_key, m.secret_key, workbench_sandbox.base_url) as client:
        yield client


@pytest.fixture
def workbench_clock(workbench_client: Client) -> SandboxClock:
    """The test's merchant's business clock (its own: moving it moves no one else's)."""
    from workbench.testing import SandboxClock

    return SandboxClock(workbench_client)


@pytest.fixture
def workbench_fail_next(workbench_client: Client) -> FailNext:
    """Makes the test's merchant's next request fail: ``workbench_fail_next("429")``."""
    from workbench.testing import FailNext

    return FailNext(workbench_client)


@pytest.fixture
def workbench_webhooks(workbench_client: Client) -> Iterator[WebhookCollector]:
    """The store's webhooks, received and verified on a local port during the test."""
    from workbench.testing import WebhookCollector

    with WebhookCollector(workbench_client) as collector:
        yield collector


@pytest.fixture
def workbench_env(
    workbench_sandbox: SandboxServer | ExternalSandbox,
    workbench_merchant: MerchantCredentials[Client],
    monkeypatch: pytest.MonkeyPatch,
) -> str:
    """Point ``WORKBENCH_*`` at the sandbox and the test's merchant; returns its base URL."""
    from workbench.config import ENV_API_KEY, ENV_BASE_URL, ENV_ENVIRONMENT, ENV_SECRET_KEY

    monkeypatch.setenv(ENV_BASE_URL, workbench_sandbox.base_url)
    monkeypatch.setenv(ENV_API_KEY, workbench_merchant.api_key)
    monkeypatch.setenv(ENV_SECRET_KEY, workbench_merchant.secret_key)
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
