"""The pytest plugin and `workbench.testing`: the fixtures a user's own test suite gets."""

from __future__ import annotations

import re
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from workbench._client import AsyncClient, Client
from workbench._exceptions import APIConnectionError, ServerError
from workbench.models import MerchantCredentials
from workbench.sandbox import SandboxServer
from workbench.testing import (
    FailNext,
    SandboxClock,
    WebhookCollector,
    running_sandbox,
)


def test_workbench_client_talks_to_a_fresh_merchant(
    workbench_sandbox: SandboxServer, workbench_client: Client
) -> None:
    assert workbench_client.base_url == workbench_sandbox.base_url
    charge = workbench_client.payments.charge_card(
        transaction_id="user-test-1", amount=2_500, card_token="tok_test_success"
    )
    assert charge.status == "captured"
    assert workbench_client.sandbox.events().items  # the charge's own event, nothing older


def test_each_test_starts_with_a_merchant_of_its_own(workbench_client: Client) -> None:
    # the same transaction id as the previous test would replay its charge if data leaked
    assert workbench_client.sandbox.fixtures().merchant_id != "mrc_demo0001"
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


def test_the_clock_fixture_settles_an_in_flight_refund(
    workbench_client: Client, workbench_clock: SandboxClock
) -> None:
    payment = workbench_client.payments.charge_card(
        transaction_id="user-clock-1", amount=4_000, card_token="tok_test_refund_async"
    )
    refund = workbench_client.payments.refund(payment.payment_id)
    assert refund.in_flight
    assert refund.last_refund is not None
    before = workbench_client.sandbox.events().items
    assert "refund.settled" not in {e.type for e in before}
    reached = workbench_clock.advance(minutes=1, seconds=1)  # the sandbox settles after 60 s
    assert reached.tzinfo is not None
    again = workbench_client.payments.refund(
        payment.payment_id, idempotency_key=refund.idempotency_key
    )
    assert not again.in_flight
    assert again.last_refund is not None
    assert again.last_refund.status == "completed"
    with pytest.raises(ValueError, match="forward by whole seconds"):
        workbench_clock.advance(seconds=-1)


def test_the_clock_fixture_moves_past_the_sandbox_bound_in_steps(
    workbench_clock: SandboxClock,
) -> None:
    # The sandbox takes at most 400 days a call; the helper still goes further.
    start = workbench_clock.advance(seconds=0)
    reached = workbench_clock.advance(days=800, seconds=1)
    moved = reached - start  # plus the wall time the calls took, in whole seconds
    assert timedelta(days=800) <= moved < timedelta(days=800, seconds=60)


def test_the_fail_next_fixture_fails_one_request(
    workbench_client: Client, workbench_fail_next: FailNext
) -> None:
    assert workbench_fail_next("500") == "500"
    with workbench_client.with_options(max_retries=0) as plain:
        with pytest.raises(ServerError):
            plain.payments.charge_card(
                transaction_id="user-fail-1", amount=1_000, card_token="tok_test_success"
            )
        # only the next request failed
        payment = plain.payments.charge_card(
            transaction_id="user-fail-1", amount=1_000, card_token="tok_test_success"
        )
    assert payment.status == "captured"


def test_the_webhooks_fixture_collects_verified_events_in_order(
    workbench_client: Client, workbench_webhooks: WebhookCollector
) -> None:
    assert workbench_client.sandbox.fixtures().stores[0].webhook_url == workbench_webhooks.url
    payment = workbench_client.payments.charge_card(
        transaction_id="user-hooks-1", amount=4_000, card_token="tok_test_refund_async"
    )
    workbench_client.payments.refund(payment.payment_id)
    assert workbench_webhooks.events == []  # nothing is delivered until the reconciler runs
    # The refund's event waits for the payment's: two passes, which deliver() runs.
    events = workbench_webhooks.wait_for(count=2)
    assert [e.type for e in events] == ["payment.captured", "refund.pending"]
    assert {e.data["paymentId"] for e in events} == {payment.payment_id}
    assert [d.outcome for d in workbench_webhooks.deliveries] == ["verified", "verified"]
    workbench_webhooks.clear()
    assert workbench_webhooks.events == []
    with pytest.raises(TimeoutError):
        workbench_webhooks.wait_for("refund.settled", timeout=0.2)


def test_the_webhooks_fixture_removes_the_target_afterwards(workbench_client: Client) -> None:
    with WebhookCollector(workbench_client) as collector:
        url = collector.url
    stores = workbench_client.sandbox.fixtures().stores
    assert all(store.webhook_url != url for store in stores)
    with pytest.raises(RuntimeError, match="not running"):
        _ = collector.events


def test_the_env_fixture_points_a_default_client_at_the_sandbox(
    workbench_env: str, workbench_sandbox: SandboxServer, workbench_merchant: MerchantCredentials
) -> None:
    assert workbench_env == workbench_sandbox.base_url
    with Client() as default:
        assert default.base_url == workbench_sandbox.base_url
        assert default.sandbox.fixtures().merchant_id == workbench_merchant.merchant_id


def test_the_merchant_is_deleted_after_its_test(workbench_sandbox: SandboxServer) -> None:
    names = {
        m.name for m in Client(base_url=workbench_sandbox.base_url).sandbox.list_merchants().items
    }
    assert not any(name and name.startswith("pytest ") for name in names), names


def test_workbench_fixtures_runs_a_scenario_and_returns_its_named_results(
    workbench_fixtures: Any, workbench_client: Client
) -> None:
    results = workbench_fixtures("refund-in-flight")
    assert set(results) == {"charge", "refund"}
    assert results["charge"]["id"].startswith("pay_")
    assert results["refund"]["inFlight"] is True
    assert results["refund"]["paymentId"] == results["charge"]["id"]
    types = [e.type for e in workbench_client.sandbox.events().items]
    assert types == ["payment.captured", "refund.pending"]


def test_a_subscription_scenario_runs_on_a_merchant_of_its_own(
    workbench_fixtures: Any, workbench_client: Client
) -> None:
    # the subscribe step names no customer: it takes this merchant's first one
    made = workbench_fixtures("subscription-past-due")
    customer = workbench_client.sandbox.fixtures().customers[0].id
    assert made["subscription"]["customerId"] == customer
    subscription = workbench_client.subscriptions.retrieve(made["subscription"]["id"])
    assert subscription.status == "past_due"
    charges = workbench_client.subscriptions.charges(subscription.id).items
    assert [c.status for c in charges] == ["declined"] * 3


def test_workbench_fixtures_checks_the_whole_file_before_making_anything(
    workbench_fixtures: Any, workbench_client: Client, tmp_path: Path
) -> None:
    from workbench.scenarios import ScenarioError

    scenario = tmp_path / "half.yaml"
    scenario.write_text(
        "steps:\n  - charge: {amount: 5000}\n  - refund: {paymentId: '${nothing.id}'}\n",
        encoding="utf-8",
    )
    with pytest.raises(ScenarioError, match=r"half\.yaml:3: step 2: paymentId: "):
        workbench_fixtures(scenario)
    assert workbench_client.sandbox.events().items == []


def test_the_guides_scenario_example_does_what_its_test_says(
    workbench_fixtures: Any, workbench_client: Client, tmp_path: Path
) -> None:
    page = (Path(__file__).resolve().parents[3] / "docs" / "testing.md").read_text("utf-8")
    [yaml_text] = re.findall(r'```yaml title="tests/partial-refund.yaml"\n(.*?)```', page, re.S)
    scenario = tmp_path / "partial-refund.yaml"
    scenario.write_text(yaml_text, encoding="utf-8")
    made = workbench_fixtures(scenario)
    payment = workbench_client.payments.retrieve(made["charge"]["id"])
    assert payment.refund_amount == 15_000
