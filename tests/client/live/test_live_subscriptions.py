"""Subscriptions and the buyer portal against the running sandbox, sync and async."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

import pytest

from tests.client.live.target import Live
from workbench._client import AsyncClient, Client
from workbench._exceptions import NotFoundError, SubscriptionStateError
from workbench.models import Subscription
from workbench.tracking import (
    Tracker,
    allowed_actions,
    await_for_subscription,
    wait_for_subscription,
)

STORE = "sto_demo0001"
PAYING = "cus_demo_ayse"  # default card tok_test_success
FAILING = "cus_demo_mehmet"  # default card tok_test_renewal_fails

PUBLIC_FIELDS = {
    "publicHash", "merchantName", "status", "amountMinor", "currency", "intervalCount",
    "intervalUnit", "cardLast4", "cardBrand", "nextChargeAt",
}  # fmt: skip


def _create(client: Client, customer: str = PAYING) -> Subscription:
    return client.subscriptions.create(
        store_id=STORE,
        customer_id=customer,
        amount_minor=9_900,
        interval_count=1,
        interval_unit="month",
    )


def test_create_retrieve_and_the_spec_fields(client: Client) -> None:
    sub = client.subscriptions.create(
        store_id=STORE,
        customer_id=PAYING,
        amount_minor=9_900,
        interval_count=1,
        interval_unit="month",
        description="Kahve kulubu",
    )
    assert sub.id.startswith("sub_")
    assert sub.merchant_id == "mrc_demo0001"
    assert (sub.store_id, sub.customer_id) == (STORE, PAYING)
    assert sub.public_hash
    assert sub.status == "active"
    assert (sub.amount_minor, sub.currency, sub.interval_count, sub.interval_unit) == (
        9_900,
        "TRY",
        1,
        "month",
    )
    assert sub.cycle_number == 0
    assert sub.next_charge_at is not None
    assert sub.card_last4 is not None
    assert len(sub.card_last4) == 4
    assert sub.card_brand
    assert sub.created_at is not None
    assert sub.idempotency_key is not None

    read = client.subscriptions.retrieve(sub.id)
    assert read.id == sub.id
    assert read.public_hash is None
    assert read.status == "active"
    assert allowed_actions(read) == ["pause", "charge_now", "cancel", "public_cancel"]


def test_trial(client: Client) -> None:
    trial_end = datetime.now(UTC) + timedelta(days=14)
    sub = client.subscriptions.create(
        store_id=STORE,
        customer_id=PAYING,
        amount_minor=4_900,
        interval_count=1,
        interval_unit="week",
        trial_end_at=trial_end,
    )
    assert sub.status == "trialing"


def test_list_visits_every_item_once_across_pages(client: Client) -> None:
    created = {_create(client).id for _ in range(5)}
    pager = client.subscriptions.list(store_id=STORE, limit=2)
    seen = [s.id for s in pager]
    assert sorted(seen) == sorted(created)
    pages = list(client.subscriptions.list(store_id=STORE, limit=2).pages())
    assert len(pages) == 3
    assert pages[-1].next_cursor in (None, "")
    frame = client.subscriptions.list(status="active").to_frame()
    assert set(frame["id"]) == created
    assert set(frame["amount_minor_try"]) == {"99,00 TL"}


def test_pause_resume_and_illegal_transitions(client: Client) -> None:
    sub = _create(client)
    paused = client.subscriptions.pause(sub.id)
    assert (paused.id, paused.status) == (sub.id, "paused")
    with pytest.raises(SubscriptionStateError):
        client.subscriptions.pause(sub.id)
    resumed = client.subscriptions.resume(sub.id)
    assert resumed.status == "active"
    with pytest.raises(SubscriptionStateError) as info:
        client.subscriptions.resume(sub.id)
    assert info.value.http_status == 409
    with pytest.raises(SubscriptionStateError):
        client.subscriptions.retry(sub.id)


def test_charge_now_goes_through_charging_and_back(client: Client) -> None:
    tracker = Tracker(client)
    sub = _create(client)
    receipt = client.subscriptions.charge_now(sub.id)
    assert receipt.status == "queuing"
    assert receipt.subscription_id == sub.id
    assert receipt.expected_at is not None
    assert receipt.check_at is not None
    assert sub.id in receipt.check_at
    done = wait_for_subscription(client, receipt.subscription_id, timeout=20,
                                 between=client.sandbox.tick)  # fmt: skip
    assert done.status == "active"
    assert done.cycle_number == 1
    charges = client.subscriptions.charges(sub.id).items
    assert [c.cycle_number for c in charges] == [1]
    assert charges[0].payment_id is not None
    assert charges[0].payment_id.startswith("pay_")
    assert charges[0].amount_minor == 9_900
    assert charges[0].charged_at is not None
    payment = client.payments.retrieve(charges[0].payment_id)
    assert payment.amount == 9_900
    assert tracker.states(sub.id)[:2] == ["active", "charging"]


def test_failing_renewal_goes_past_due_and_retry(client: Client) -> None:
    sub = _create(client, FAILING)
    client.sandbox.advance_clock(32 * 24 * 3600)
    late = client.subscriptions.retrieve(sub.id)
    assert late.status in ("past_due", "expired")
    if late.status == "past_due":
        assert "retry" in allowed_actions(late)
        retried = client.subscriptions.retry(sub.id)
        assert retried.status == "past_due"
        assert retried.next_charge_at is not None


def test_cancel_at_period_end_and_now(client: Client) -> None:
    sub = _create(client)
    later = client.subscriptions.cancel(sub.id, at_period_end=True)
    assert (later.id, later.status, later.cancel_at_period_end) == (sub.id, "active", True)
    other = _create(client)
    now = client.subscriptions.cancel(other.id, at_period_end=False, reason="moving away")
    assert now.status == "cancelled"
    assert allowed_actions(now) == []


def test_buyer_portal(client: Client) -> None:
    sub = _create(client)
    public_hash = sub.public_hash
    assert public_hash
    view = client.portal.retrieve(public_hash)
    assert set(view.model_dump(by_alias=True, exclude_none=True)) <= PUBLIC_FIELDS
    assert view.model_extra == {}
    assert (view.public_hash, view.status, view.amount_minor) == (public_hash, "active", 9_900)
    assert view.merchant_name
    session = client.portal.update_card_session(public_hash)
    assert session.session_id in session.checkout_url
    assert session.model_extra == {}
    cancelled = client.portal.cancel(public_hash)
    assert (cancelled.public_hash, cancelled.cancel_at_period_end) == (public_hash, True)
    with pytest.raises(NotFoundError):
        client.portal.retrieve(public_hash + "x")


def test_async_subscriptions_and_portal(live: Live) -> None:
    async def run() -> None:
        async with AsyncClient(live.api_key, live.secret_key, live.base_url) as client:
            await client.sandbox.reset()
            subs = [
                await client.subscriptions.create(
                    store_id=STORE,
                    customer_id=PAYING,
                    amount_minor=1_000 + i,
                    interval_count=1,
                    interval_unit="day",
                )
                for i in range(3)
            ]
            listed = [s.id async for s in client.subscriptions.list(limit=2)]
            assert sorted(listed) == sorted(s.id for s in subs)
            first = subs[0]
            assert (await client.subscriptions.retrieve(first.id)).status == "active"
            assert (await client.subscriptions.pause(first.id)).status == "paused"
            assert (await client.subscriptions.resume(first.id)).status == "active"
            # The resume's charge is finished by this pass (a background pass of an
            # external sandbox may have done it first), so the charge-now below is a
            # second charge whenever the reconciler runs (decisions: charge-now).
            await client.sandbox.tick()
            assert (await client.subscriptions.retrieve(first.id)).cycle_number == 1
            receipt = await client.subscriptions.charge_now(first.id)
            done = await await_for_subscription(
                client, receipt.subscription_id, timeout=20, between=client.sandbox.tick
            )
            assert (done.status, done.cycle_number) == ("active", 2)
            items = (await client.subscriptions.charges(first.id)).items
            assert [(c.cycle_number, c.status) for c in items] == [(1, "captured"), (2, "captured")]
            with pytest.raises(SubscriptionStateError):
                await client.subscriptions.retry(first.id)
            cancel = await client.subscriptions.cancel(subs[1].id, at_period_end=False)
            assert cancel.status == "cancelled"
            assert first.public_hash
            view = await client.portal.retrieve(first.public_hash)
            assert view.status == "active"
            card = await client.portal.update_card_session(first.public_hash)
            assert card.expires_at > datetime.now(UTC)
            public_cancel = await client.portal.cancel(first.public_hash, at_period_end=True)
            assert public_cancel.cancel_at_period_end is True

    asyncio.run(run())
