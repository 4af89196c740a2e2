"""Renewals in batches: more subscriptions fall due than one batch holds.

The reconciler's subscription work is run by hand on a database of the test's own (per
backend), with a batch of 20, over 50 subscriptions made as the route makes them
(`service.create_many`). Three are paused before they fall due; of the 47 due (two
batches and a part of a third) some renew, some are declined, two were set to cancel at
period end. Checked: every due
subscription is handled once (one claim, one payment, the right events in the right
order), and no batch is bigger than its size, so a month-end of any size is held in
memory one batch at a time.

Then two passes race over the same due subscriptions, each on its own engine (two
workers, or two hosts): no subscription is renewed twice. On PostgreSQL a pass that
meets rows another pass has locked skips them (``FOR UPDATE SKIP LOCKED``) and claims
others instead of waiting.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import pytest
import sqlalchemy as sa

from tests.sandbox.subscriptions.api import AYSE, MEHMET
from workbench.sandbox import DEMO_MERCHANT_ID, DEMO_STORE_ID, SandboxConfig
from workbench.sandbox.clock import business_now, set_business_time
from workbench.sandbox.context import Caller
from workbench.sandbox.payments.tables import payments
from workbench.sandbox.runtime import SandboxRuntime
from workbench.sandbox.storage import Database
from workbench.sandbox.subscriptions import RenewalWork, service, subscription_charges
from workbench.sandbox.subscriptions.models import (
    CancelRequest,
    SubscriptionRequest,
)
from workbench.sandbox.subscriptions.tables import subscriptions
from workbench.sandbox.tables import events

BATCH = 20
#: Subscriptions made: 47 of them fall due, more than two batches.
COUNT = 50
CALLER = Caller(api_key="test", merchant_id=DEMO_MERCHANT_ID, store_id=DEMO_STORE_ID, request_id="")


def _request(customer: str) -> SubscriptionRequest:
    return SubscriptionRequest.model_validate(
        {
            "storeId": DEMO_STORE_ID,
            "customerId": customer,
            "amountMinor": 9_990,
            "currency": "TRY",
            "intervalCount": 1,
            "intervalUnit": "month",
        }
    )


class CountingWork(RenewalWork):
    """`RenewalWork` that keeps the size of every batch it claimed."""

    def __init__(self, db: Database, batch_size: int) -> None:
        super().__init__(db, batch_size)
        self.claimed: list[int] = []

    def claim_due(self, merchant_id: str, now: datetime) -> tuple[int, list[int]]:
        settled, claimed = super().claim_due(merchant_id, now)
        self.claimed.append(settled + len(claimed))
        return settled, claimed


@pytest.fixture
def sandbox(own_db: str) -> Iterator[SandboxRuntime]:
    """The sandbox's database on each backend, no server and no background passes."""
    runtime = SandboxRuntime(SandboxConfig(db_url=own_db, run_reconciler_in_background=False))
    runtime.open()
    try:
        yield runtime
    finally:
        runtime.stop()


def _seed(db: Database, renewing: int, declined: int) -> tuple[list[str], list[str]]:
    with db.write() as conn:
        good = [row.id for row, _ in service.create_many(conn, CALLER, _request(AYSE), renewing)]
        bad = [row.id for row, _ in service.create_many(conn, CALLER, _request(MEHMET), declined)]
    return good, bad


def _due(db: Database) -> datetime:
    """Move the demo merchant's clock past every subscription's first renewal."""
    with db.write() as conn:
        latest = conn.execute(sa.select(sa.func.max(subscriptions.c.next_charge_at))).scalar_one()
        moment: datetime = latest + timedelta(seconds=1)
        set_business_time(conn, DEMO_MERCHANT_ID, moment)
        assert business_now(conn, DEMO_MERCHANT_ID) >= moment
    return moment


@dataclass
class Left:
    """What the renewals left, per subscription."""

    subs: dict[str, Any]
    claims: dict[str, list[Any]]
    payments: dict[str, list[Any]]
    events: dict[str, list[dict[str, Any]]]


def _left(db: Database) -> Left:
    with db.read() as conn:
        subs = {row.id: row for row in conn.execute(sa.select(subscriptions))}
        claims: dict[str, list[Any]] = {sub_id: [] for sub_id in subs}
        charges = subscription_charges
        for claim in conn.execute(sa.select(charges).order_by(charges.c.id)):
            claims[claim.subscription_id].append(claim)
        paid: dict[str, list[Any]] = {sub_id: [] for sub_id in subs}
        for payment in conn.execute(
            sa.select(payments).where(payments.c.transaction_id.like("renewal %"))
        ):
            paid[payment.transaction_id.split(" ")[1]].append(payment)
        history: dict[str, list[dict[str, Any]]] = {sub_id: [] for sub_id in subs}
        for event in conn.execute(sa.select(events.c.payload).order_by(events.c.seq)).scalars():
            payload = json.loads(event)
            sub_id = payload["data"].get("subscriptionId")
            if sub_id in history:
                history[sub_id].append(payload)
    return Left(subs, claims, paid, history)


def test_more_due_than_a_batch_renews_each_once_in_batches_of_its_size(
    sandbox: SandboxRuntime,
) -> None:
    db = sandbox.db
    good, bad = _seed(db, 40, 10)
    paused, ending = good[:3], good[3:5]
    with db.write() as conn:
        for sub_id in paused:
            service.pause(conn, CALLER, sub_id)
        for sub_id in ending:
            service.cancel(conn, CALLER, sub_id, CancelRequest(atPeriodEnd=True))
    renewing = [s for s in good if s not in paused and s not in ending]
    now = _due(db)
    work = CountingWork(db, BATCH)

    done = work.run(DEMO_MERCHANT_ID, now, time.monotonic() + 60)

    # Paused ones are not due at all; the two ending ones are settled by the claim step.
    assert len(good) + len(bad) == COUNT
    assert done == len(renewing) + len(bad) + len(ending)
    assert max(work.claimed) == BATCH
    assert sum(work.claimed) == len(renewing) + len(bad) + len(ending)
    assert len([size for size in work.claimed if size]) == 3
    left = _left(db)
    for sub_id in renewing:
        sub = left.subs[sub_id]
        (claim,) = left.claims[sub_id]
        (payment,) = left.payments[sub_id]
        assert (claim.state, claim.cycle_number, claim.kind) == ("done", 1, "renewal")
        assert (payment.id, payment.status, payment.amount) == (claim.payment_id, "captured", 9_990)
        assert payment.transaction_id == f"renewal {sub_id} 1"
        assert (sub.status, sub.cycle_number, sub.periods, sub.claim_id) == ("active", 1, 2, None)
        assert sub.next_charge_at > now
        history = left.events[sub_id]
        assert [e["type"] for e in history] == [
            "subscription.created",
            "payment.captured",
            "subscription.renewed",
        ]
        assert history[1]["data"]["paymentId"] == payment.id
        assert history[2]["data"]["paymentId"] == payment.id
        assert history[2]["data"]["cycleNumber"] == 1
    for sub_id in bad:
        sub = left.subs[sub_id]
        (claim,) = left.claims[sub_id]
        (payment,) = left.payments[sub_id]
        assert (claim.state, payment.status, payment.id) == ("done", "declined", claim.payment_id)
        assert (sub.status, sub.cycle_number, sub.claim_id) == ("past_due", 0, None)
        assert [e["type"] for e in left.events[sub_id]] == [
            "subscription.created",
            "payment.declined",
            "subscription.renewal_failed",
            "subscription.past_due",
        ]
    for sub_id in paused + ending:
        assert left.claims[sub_id] == []
        assert left.payments[sub_id] == []
    for sub_id in ending:
        assert left.subs[sub_id].status == "cancelled"
        assert [e["type"] for e in left.events[sub_id]] == [
            "subscription.created",
            "subscription.cancel_scheduled",
            "subscription.cancelled",
        ]
    # Nothing left to do: a second pass finds nothing due.
    assert work.run(DEMO_MERCHANT_ID, now, time.monotonic() + 60) == 0


def _race(url: str, runners: int, now: datetime) -> list[int]:
    """``runners`` passes at once, each on an engine of its own; what each one did."""
    dbs = [Database(url) for _ in range(runners)]
    done = [0] * runners
    errors: list[BaseException] = []
    start = threading.Barrier(runners)

    def run(index: int) -> None:
        try:
            start.wait(timeout=60)
            done[index] = RenewalWork(dbs[index], 10).run(
                DEMO_MERCHANT_ID, now, time.monotonic() + 60
            )
        except BaseException as exc:  # reported below, in the test's thread
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(runners)]
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=300)
        assert not any(thread.is_alive() for thread in threads), "a pass did not end"
    finally:
        for db in dbs:
            db.dispose()
    assert errors == []
    return done


def _renewed_once(db: Database, ids: list[str]) -> None:
    left = _left(db)
    twice = {s: len(left.payments[s]) for s in ids if len(left.payments[s]) != 1}
    assert twice == {}
    for sub_id in ids:
        assert [c.state for c in left.claims[sub_id]] == ["done"]
        assert left.subs[sub_id].cycle_number == 1
        types = [e["type"] for e in left.events[sub_id]]
        assert types == ["subscription.created", "payment.captured", "subscription.renewed"]


def test_two_passes_racing_over_the_same_due_subscriptions_renew_each_once(
    sandbox: SandboxRuntime, own_db: str
) -> None:
    ids, _ = _seed(sandbox.db, 60, 0)
    now = _due(sandbox.db)
    done = _race(own_db, 2, now)
    assert sum(done) == len(ids)
    _renewed_once(sandbox.db, ids)


def test_a_pass_skips_rows_another_pass_holds_and_claims_others(
    sandbox: SandboxRuntime, own_db: str
) -> None:
    if sandbox.db.is_sqlite:
        pytest.skip("SQLite has one writer: a second pass waits for the first, nothing to skip")
    ids, _ = _seed(sandbox.db, 30, 0)
    now = _due(sandbox.db)
    holder = sa.create_engine(own_db)
    try:
        with holder.connect() as conn, conn.begin():
            # Another pass's claim, half done: its rows are locked until it commits.
            held = set(
                conn.execute(
                    sa.select(subscriptions.c.id)
                    .order_by(subscriptions.c.next_charge_at)
                    .limit(10)
                    .with_for_update()
                ).scalars()
            )
            claimed: list[list[int]] = []
            other = threading.Thread(
                target=lambda: claimed.append(
                    RenewalWork(sandbox.db, 10).claim_due(DEMO_MERCHANT_ID, now)[1]
                )
            )
            other.start()
            other.join(timeout=60)
            # Waiting for the held rows would keep it until the holder commits.
            assert not other.is_alive(), "the second pass waited for rows another pass holds"
        with sandbox.db.read() as conn:
            taken = set(
                conn.execute(
                    sa.select(subscription_charges.c.subscription_id).where(
                        subscription_charges.c.id.in_(claimed[0])
                    )
                ).scalars()
            )
    finally:
        holder.dispose()
    assert len(taken) == 10
    assert taken.isdisjoint(held)
    # The held rows are free again: the claimed batch and the rest finish, each once.
    assert sum(_race(own_db, 2, now)) == len(ids)
    _renewed_once(sandbox.db, ids)
