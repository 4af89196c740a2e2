"""Tracking: allowed actions from the spec's machines, call history, diagrams, waiting."""

from __future__ import annotations

import asyncio
import json
from itertools import count

import httpx2
import pytest

from tests.client import samples
from tests.client.fake_time import FakeTime
from tests.client.offline import make_async_client
from tests.client.script import Script, ok
from workbench import models
from workbench._client import Client
from workbench._options import RequestOptions
from workbench.resources._base import SyncResource
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
        httpx2.Response(
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


class Mandate(models.APIObject):
    """A made-up object of a made-up endpoint, unknown to workbench.tracking."""

    mandate_id: str | None = None
    status: str | None = None


class Mandates(SyncResource):
    """A resource as a new endpoint would add it: it names its action and object, nothing else."""

    def create(self, *, customer_id: str) -> Mandate:
        options = RequestOptions(
            "POST",
            "/v2/mandates",
            {"customerId": customer_id},
            action="create",
            id_field="mandateId",
        )
        return self._client.request(options, Mandate)

    def activate(self, mandate_id: str) -> Mandate:
        # a path shape the old path parser would have read as action "mandates:activate"
        options = RequestOptions(
            "POST",
            f"/v2/mandates:activate/{mandate_id}",
            {},
            action="activate",
            object_id=mandate_id,
        )
        return self._client.request(options, Mandate)

    def retrieve(self, mandate_id: str) -> Mandate:
        options = RequestOptions(
            "GET", f"/v2/m/{mandate_id}", action="retrieve", object_id=mandate_id
        )
        return self._client.request(options, Mandate)


def test_a_new_resource_method_is_tracked_without_teaching_the_tracker(
    client: Client, script: Script
) -> None:
    tracker = Tracker(client)
    mandates = Mandates(client)
    script.replies = [
        ok({"mandateId": "man_1", "status": "pending"}, request_id="r1"),
        ok({"status": "active"}, request_id="r2"),
        httpx2.Response(409, json={"code": "SVC-MAN-4090", "message": "no", "requestId": "r3"}),
        ok({"mandateId": "man_1", "status": "revoked"}),
    ]
    created = mandates.create(customer_id="cus_1")
    mandates.activate("man_1")
    with pytest.raises(Exception, match="SVC-MAN-4090"):
        mandates.activate("man_1")
    mandates.retrieve("man_1")
    assert created.response is not None
    assert (created.response.action, created.response.object_id) == ("create", "man_1")
    frame = tracker.history("man_1")
    assert list(frame["action"]) == ["create", "activate", "activate", "retrieve"]
    assert list(frame["state_after"]) == ["pending", "active", "active", "revoked"]
    assert list(frame["error_code"].fillna("-")) == ["-", "-", "SVC-MAN-4090", "-"]
    assert tracker.mermaid("man_1").splitlines()[1:] == [
        "    [*] --> pending: 1. create",
        "    pending --> active: 2. activate",
        "    active --> revoked: 3. observed",
    ]


def test_a_public_hash_is_tracked_as_its_subscription(client: Client, script: Script) -> None:
    tracker = Tracker(client)
    script.replies = [
        ok({**samples.PUBLIC_SUB, "publicHash": "ph_late", "status": "active"}),
        ok({**samples.SUBSCRIPTION, "publicHash": "ph_late", "status": "past_due"}),
        ok({**samples.PUBLIC_SUB, "publicHash": "ph_late", "status": "past_due"}),
    ]
    client.portal.retrieve("ph_late")  # not yet known to belong to a subscription
    client.subscriptions.retrieve("sub_1")  # a read teaches the hash too
    client.portal.retrieve("ph_late")
    assert [r.object_id for r in tracker.records] == ["ph_late", "sub_1", "sub_1"]
    assert tracker.states("sub_1") == ["past_due"]


def test_a_queued_charge_is_drawn_even_when_the_tracker_already_thought_it_charging(
    client: Client, script: Script
) -> None:
    tracker = Tracker(client)
    script.replies = [ok(samples.RECEIPT)]
    client.subscriptions.charge_now("sub_1")
    client.subscriptions.charge_now("sub_1")  # the first finished unobserved; a second one
    assert tracker.mermaid("sub_1").splitlines()[1:] == [
        "    [*] --> charging: 1. charge_now",
        "    charging --> charging: 2. charge_now",
    ]


def test_a_call_without_an_action_is_recorded_by_its_method(client: Client, script: Script) -> None:
    tracker = Tracker(client)
    script.replies = [ok(samples.PAYMENT)]
    client.request(RequestOptions("GET", "/v1/payments/pay_1"), models.Payment)
    (record,) = tracker.records
    assert (record.action, record.object_id, record.state_after) == ("GET", None, None)


def test_waiting_lives_in_its_own_module_and_stays_importable_where_it_was() -> None:
    import workbench
    from workbench import tracking, waiting

    for name in waiting.__all__:
        assert getattr(tracking, name) is getattr(waiting, name)
    assert workbench.wait_until is waiting.wait_until
    assert workbench.WaitTimeout is waiting.WaitTimeout
