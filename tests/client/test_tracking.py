"""Tracking: allowed actions from the spec's machines, call history, diagrams, waiting."""

from __future__ import annotations

import asyncio
import json
from itertools import count

import httpx
import pytest

from tests.client import samples
from tests.client.conftest import FakeTime, Script, make_async_client, ok
from workbench import models
from workbench._client import Client
from workbench.spec import PAYMENT, SUBSCRIPTION
from workbench.tracking import (
    Tracker,
    WaitTimeout,
    allowed_actions,
    await_for_refund,
    wait_for_refund,
    wait_for_subscription,
    wait_until,
)


def test_allowed_actions_follow_the_spec_tables() -> None:
    authorized = models.CardCharge.model_validate({**samples.CHARGE, "status": "authorized"})
    assert allowed_actions(authorized) == ["capture", "void"]
    assert allowed_actions(models.Payment.model_validate(samples.PAYMENT)) == ["refund"]
    paused = models.SubscriptionUpdate.model_validate({"id": "sub_1", "status": "paused"})
    assert allowed_actions(paused) == SUBSCRIPTION.actions("paused")
    assert "resume" in allowed_actions(paused)
    assert allowed_actions("pay_1", "voided") == []
    assert allowed_actions("pay_1", "voided", include_idempotent=True) == ["void"]
    receipt = models.ChargeReceipt.model_validate(samples.RECEIPT)
    assert allowed_actions(receipt) == SUBSCRIPTION.actions("charging")


def test_allowed_actions_for_a_new_status_is_empty_not_a_crash() -> None:
    payment = models.Payment.model_validate({**samples.PAYMENT, "status": "disputed"})
    assert allowed_actions(payment) == []


def test_allowed_actions_needs_a_machine() -> None:
    with pytest.raises(ValueError, match="no state machine"):
        allowed_actions(models.SubscriptionChargeList.model_validate(samples.CHARGES))


def test_tracker_records_calls_and_states(client: Client, script: Script) -> None:
    tracker = Tracker(client)
    script.replies = [
        ok({**samples.CHARGE, "status": "authorized"}, request_id="r1"),
        ok(samples.CAPTURE, request_id="r2"),
        httpx.Response(
            409,
            json={"code": "SVC-PAY-4090", "message": "captured", "requestId": "r3"},
            headers={"X-Request-Id": "r3"},
        ),
    ]
    charge = client.payments.charge_card(
        transaction_id="o", amount=12500, card_token="tok_test_success", capture=False
    )
    client.payments.capture(charge.payment_id)
    with pytest.raises(Exception, match="SVC-PAY-4090"):
        client.payments.void(charge.payment_id)
    frame = tracker.history("pay_1")
    assert list(frame["action"]) == ["charge", "capture", "void"]
    assert list(frame["state_before"].fillna("-")) == ["-", "authorized", "captured"]
    assert list(frame["state_after"]) == ["authorized", "captured", "captured"]
    assert list(frame["status_code"]) == [200, 200, 409]
    assert list(frame["request_id"]) == ["r1", "r2", "r3"]
    assert frame.loc[2, "error_code"] == "SVC-PAY-4090"
    assert frame.loc[0, "idempotency_key"] == charge.idempotency_key
    assert tracker.states("pay_1") == ["authorized", "captured"]
    diagram = tracker.mermaid("pay_1")
    assert diagram.splitlines() == [
        "stateDiagram-v2",
        "    [*] --> authorized: 1. charge",
        "    authorized --> captured: 2. capture",
    ]
    # every edge the tracker drew is a transition the spec allows
    for record in tracker.records:
        if record.status_code < 400:
            assert PAYMENT.allows(record.state_before, record.action), record
    tracker.detach()
    script.replies = [ok(samples.PAYMENT)]
    client.payments.retrieve("pay_1")
    assert len(tracker.records) == 3


def test_tracker_follows_subscriptions_through_charge_now_and_the_portal(
    client: Client, script: Script
) -> None:
    tracker = Tracker(client)
    script.replies = [
        ok(samples.SUBSCRIPTION),
        ok(samples.RECEIPT),
        ok({**samples.SUBSCRIPTION, "status": "active", "cycleNumber": 1}),
        ok({**samples.PUBLIC_CANCEL, "status": "cancelled", "cancelAtPeriodEnd": False}),
    ]
    sub = client.subscriptions.create(
        store_id="sto_1",
        customer_id="cus_1",
        amount_minor=9900,
        interval_count=1,
        interval_unit="month",
    )
    client.subscriptions.charge_now(sub.id)
    client.subscriptions.retrieve(sub.id)
    assert sub.public_hash is not None
    client.portal.cancel(sub.public_hash, at_period_end=False)
    assert tracker.states("sub_1") == ["active", "charging", "active", "cancelled"]
    assert tracker.mermaid("sub_1").splitlines()[1:] == [
        "    [*] --> active: 1. create",
        "    active --> charging: 2. charge_now",
        "    charging --> active: 3. observed",
        "    active --> cancelled: 4. public_cancel",
    ]


def test_wait_until_backs_off_and_calls_between() -> None:
    values = iter(["charging", "charging", "active"])
    sleeps: list[float] = []
    ticks = count()
    now = [0.0]

    def sleep(s: float) -> None:
        sleeps.append(s)
        now[0] += s

    result = wait_until(
        lambda: next(values),
        lambda v: v != "charging",
        interval=0.5,
        factor=2.0,
        between=lambda: next(ticks),
        sleep=sleep,
        monotonic=lambda: now[0],
    )
    assert result == "active"
    assert sleeps == [0.5, 1.0]
    assert next(ticks) == 2


def test_wait_until_times_out_with_the_last_value() -> None:
    now = [0.0]

    def sleep(s: float) -> None:
        now[0] += s

    with pytest.raises(WaitTimeout) as info:
        wait_until(
            lambda: "charging",
            lambda v: v == "active",
            timeout=3.0,
            sleep=sleep,
            monotonic=lambda: now[0],
        )
    assert info.value.last == "charging"
    assert isinstance(info.value, TimeoutError)


def test_wait_for_subscription_polls_until_it_leaves_charging(
    client: Client, script: Script
) -> None:
    script.replies = [
        ok({**samples.SUBSCRIPTION, "status": "charging"}),
        ok({**samples.SUBSCRIPTION, "status": "charging"}),
        ok({**samples.SUBSCRIPTION, "status": "past_due"}),
    ]
    ticks: list[int] = []
    sub = wait_for_subscription(client, "sub_1", timeout=5, between=lambda: ticks.append(1))
    assert sub.status == "past_due"
    assert len(script.requests) == 3
    assert ticks == [1, 1]


def test_wait_for_refund_repeats_the_same_request_until_settled(
    client: Client, script: Script
) -> None:
    pending = {
        **samples.REFUND,
        "lastRefund": {**samples.REFUND["lastRefund"], "status": "pending", "completedAt": None},
    }
    script.replies = [ok(pending, status=202), ok(pending, status=202), ok(samples.REFUND)]
    first = client.payments.refund("pay_1", amount=2500, reason="broken cup")
    assert first.in_flight
    settled = wait_for_refund(client, first, timeout=5)
    assert not settled.in_flight
    assert settled.idempotency_key == first.idempotency_key
    assert len(set(script.header("Idempotency-Key"))) == 1
    assert script.bodies() == [{"amount": 2500, "reason": "broken cup"}] * 3


def test_wait_for_refund_returns_a_settled_refund_at_once(client: Client, script: Script) -> None:
    script.replies = [ok(samples.REFUND)]
    result = client.payments.refund("pay_1")
    assert wait_for_refund(client, result) is result
    assert len(script.requests) == 1


def test_async_wait_for_refund(script: Script, fake_time: FakeTime) -> None:
    pending = {
        **samples.REFUND,
        "lastRefund": {**samples.REFUND["lastRefund"], "status": "pending"},
    }
    script.replies = [ok(pending, status=202), ok(samples.REFUND)]
    ticks: list[int] = []

    async def tick() -> None:
        ticks.append(1)

    async def run() -> models.RefundResult:
        async with make_async_client(script, fake_time) as c:
            first = await c.payments.refund("pay_1")
            return await await_for_refund(c, first, timeout=5, between=tick)

    settled = asyncio.run(run())
    assert not settled.in_flight
    assert ticks == [1]
    assert json.loads(script.requests[1].content) == {}
