"""Test your own integration offline: the sandbox on a free port and a client pointed at it.

Enable the fixtures in your ``conftest.py``::

    pytest_plugins = ["workbench.testing"]

then ask for them::

    def test_refund_flow(workbench_client):
        charge = workbench_client.payments.charge_card(
            transaction_id="order-1", amount=12_500, card_token="tok_test_success"
        )
        assert workbench_client.payments.refund(charge.payment_id).status == "captured"

`workbench_sandbox` is one in-memory sandbox for the whole session;
`workbench_client` and `workbench_async_client` are fresh clients per test, and
the demo merchant's data is reset before each test so tests do not see each
other's payments. Its reconciler (renewals, refund settlement, webhook deliveries)
runs only when a test asks, with ``client.sandbox.tick()``, ``settle()`` or
``advance_clock()``, so no outcome depends on when a background tick happens.
Outside pytest, `running_sandbox` does the same as a context manager, with the
background reconciler on unless ``run_reconciler_in_background=False`` is passed.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import pytest

from workbench._client import AsyncClient, Client
from workbench.config import DEFAULT_API_KEY, DEFAULT_SECRET_KEY

if TYPE_CHECKING:
    from workbench.sandbox import SandboxServer

__all__ = [
    "running_sandbox",
    "workbench_async_client",
    "workbench_client",
    "workbench_sandbox",
]


@contextmanager
def running_sandbox(**config: Any) -> Iterator[SandboxServer]:
    """Start a sandbox on a free 127.0.0.1 port (in-memory database) and stop it afterwards.

    Args:
        **config: `workbench.sandbox.SandboxConfig` fields, e.g. ``latency_ms=50``.
    """
    from workbench.sandbox import SandboxConfig, SandboxServer

    config.setdefault("db_url", "sqlite://")
    config.setdefault("api_key", DEFAULT_API_KEY)
    config.setdefault("secret_key", DEFAULT_SECRET_KEY)
    with SandboxServer(SandboxConfig(**config)) as server:
        yield server


def _client_for(server: SandboxServer, **kwargs: Any) -> Client:
    config = server.config
    return Client(config.api_key, config.secret_key, server.base_url, **kwargs)


@pytest.fixture(scope="session")
def workbench_sandbox() -> Iterator[SandboxServer]:
    """One running sandbox for the test session; its reconciler runs only when asked."""
    with running_sandbox(run_reconciler_in_background=False) as server:
        yield server


@pytest.fixture
def workbench_client(workbench_sandbox: SandboxServer) -> Iterator[Client]:
    """A `Client` for the sandbox's demo merchant, whose data is reset first."""
    with _client_for(workbench_sandbox) as client:
        client.sandbox.reset()
        yield client


@pytest.fixture
async def workbench_async_client(workbench_sandbox: SandboxServer) -> AsyncIterator[AsyncClient]:
    """An `AsyncClient` for the demo merchant (needs an async test runner such as anyio)."""
    config = workbench_sandbox.config
    async with AsyncClient(config.api_key, config.secret_key, workbench_sandbox.base_url) as client:
        await client.sandbox.reset()
        yield client
