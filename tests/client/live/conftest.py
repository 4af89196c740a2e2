"""Live fixtures: the real sandbox over real HTTP on a free 127.0.0.1 port.

The sandbox runs in this process (in-memory SQLite, no rate limit) for the
whole module run; each test resets the demo merchant's data first. Its reconciler
runs only when a test asks (``client.sandbox.tick()``, ``settle()``,
``advance_clock()``), never on a wall-clock tick, so no outcome depends on when one
would have happened.
``WORKBENCH_TEST_SANDBOX_URL`` points the suite at a sandbox already running
elsewhere instead (with the default demo keys). `Live`, which the tests import too, is in
``target.py`` beside this module.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from tests.client.live.target import Live
from workbench._client import Client
from workbench.testing import running_sandbox


@pytest.fixture(scope="session")
def live() -> Iterator[Live]:
    external = os.environ.get("WORKBENCH_TEST_SANDBOX_URL")
    if external:
        yield Live(external.rstrip("/"))
        return
    with running_sandbox(rate_limit_per_second=0, run_reconciler_in_background=False) as server:
        yield Live(server.base_url)


@pytest.fixture
def client(live: Live) -> Iterator[Client]:
    with live.client() as c:
        c.sandbox.reset()
        yield c


# The pytest plugin's fixtures, tested here. The repository's own runs do not load the
# plugin through its entry point (``-p no:workbench`` in pyproject.toml: it would import
# the package before pytest-cov starts); this is the one place that registers them.
from workbench.testing.pytest_plugin import (  # noqa: E402
    workbench_async_client,
    workbench_client,
    workbench_clock,
    workbench_env,
    workbench_fail_next,
    workbench_fixtures,
    workbench_merchant,
    workbench_sandbox,
    workbench_sandbox_options,
    workbench_webhooks,
)

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
