"""`workbench.testing`: the fixtures a user's own test suite gets."""

from __future__ import annotations

import pytest

from workbench._client import AsyncClient, Client
from workbench._exceptions import APIConnectionError
from workbench.sandbox import SandboxServer
from workbench.testing import running_sandbox


def test_workbench_client_talks_to_a_fresh_merchant(
    workbench_sandbox: SandboxServer, workbench_client: Client
) -> None:
    assert workbench_client.base_url == workbench_sandbox.base_url
    charge = workbench_client.payments.charge_card(
        transaction_id="user-test-1", amount=2_500, card_token="tok_test_success"
    )
    assert charge.status == "captured"
    assert workbench_client.sandbox.events().items  # the charge's own event, nothing older


def test_each_test_starts_from_a_reset_merchant(workbench_client: Client) -> None:
    # the same transaction id as the previous test would replay its charge if data leaked
    charge = workbench_client.payments.charge_card(
        transaction_id="user-test-1", amount=3_000, card_token="tok_test_success"
    )
    assert charge.amount == 3_000
    assert not (charge.response and charge.response.replayed)


@pytest.mark.anyio
async def test_workbench_async_client(workbench_async_client: AsyncClient) -> None:
    payment = await workbench_async_client.payments.charge_card(
        transaction_id="user-test-async", amount=1_500, card_token="tok_test_success"
    )
    assert payment.status == "captured"


def test_running_sandbox_outside_pytest() -> None:
    with (
        running_sandbox(latency_ms=0) as server,
        Client(server.config.api_key, server.config.secret_key, server.base_url) as client,
    ):
        assert client.sandbox.fixtures().merchant_id == "mrc_demo0001"
    with Client(base_url=server.base_url, max_retries=0) as gone, pytest.raises(APIConnectionError):
        gone.sandbox.fixtures()
