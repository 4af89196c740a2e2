"""The flow behind notebook 06's "Try it" form, the subscription lifecycle: create (with or
without a trial), renew by moving the sandbox clock, a failing card to ``past_due`` and
``retry``, ``charge-now`` polled out of ``charging``, pause and resume, cancel."""

from __future__ import annotations

from datetime import timedelta
from typing import TYPE_CHECKING, Literal

from workbench.flows._run import APPROVED_CARD, FlowRun
from workbench.money import format_try
from workbench.tracking import wait_for_subscription, wait_until

if TYPE_CHECKING:
    from datetime import datetime

    from workbench._client import Client
    from workbench.models import SandboxFixtures, Subscription

__all__ = ["DEMO_CUSTOMER", "first_customer", "subscriptions"]

#: The demo merchant's built-in customer; the flows subscribe the client's merchant's
#: first customer (a merchant made on demand has its own ids), this one where none is listed.
DEMO_CUSTOMER = "cus_demo_ayse"


def first_customer(fixtures: SandboxFixtures) -> str:
    """The merchant's first built-in customer (Ayşe), from its fixtures."""
    return fixtures.customers[0].id if fixtures.customers else DEMO_CUSTOMER


def _to_next_charge(client: Client, sub: Subscription, now: datetime) -> datetime:
    """Move the sandbox clock just past the subscription's next charge; the new business time."""
    assert sub.next_charge_at is not None
    seconds = max(1, int((sub.next_charge_at - now).total_seconds()) + 1)
    return client.sandbox.advance_clock(seconds).business_time


def subscriptions(
    client: Client,
    *,
    amount: int = 19_900,
    interval_unit: Literal["day", "week", "month", "year"] = "month",
    interval_count: int = 1,
    trial_days: int = 0,
    card_token: str = APPROVED_CARD,
    renewals: int = 2,
) -> FlowRun:
    """Run a subscription through its life on the sandbox's clock.

    Args:
        client: a configured client of the local sandbox (it moves the clock).
        amount: kuruş per cycle.
        interval_unit: ``day``, ``week``, ``month`` or ``year``.
        interval_count: units per cycle.
        trial_days: days of trial before the first charge (0: none).
        card_token: ``tok_test_success``, or ``tok_test_renewal_fails`` to reach ``past_due``.
        renewals: cycles to move the clock through.

    Returns:
        The run; ``outcome`` holds ``created_status``, ``cycle_number``, ``charges``
        (statuses of the charges), ``after_renewals``, ``after_charge_now``,
        ``cancel_at_period_end`` and ``final_status``.
    """
    params = {"amount": amount, "interval_unit": interval_unit, "interval_count": interval_count,
              "trial_days": trial_days, "card_token": card_token, "renewals": renewals}  # fmt: skip
    run = FlowRun("subscriptions", params)
    with run.recording(client):
        fixtures = client.sandbox.fixtures()
        now = fixtures.business_time
        assert now is not None
        trial_end = now + timedelta(days=trial_days) if trial_days else None
        sub = client.subscriptions.create(
            store_id=fixtures.store_id, customer_id=first_customer(fixtures), amount_minor=amount,
            interval_count=interval_count, interval_unit=interval_unit, card_token=card_token,
            trial_end_at=trial_end,
        )  # fmt: skip
        run.object_id = sub.id
        every = f"{interval_count} {interval_unit}"
        run.say(
            f"create {format_try(amount)} every {every}: {sub.status}, cycle {sub.cycle_number}"
        )
        run.outcome["created_status"] = sub.status
        for _ in range(renewals):
            now = _to_next_charge(client, sub, now)
            sub = client.subscriptions.retrieve(sub.id)
            run.say(f"clock moves past the next charge: {sub.status}, cycle {sub.cycle_number}")
        run.outcome["after_renewals"] = sub.status
        if sub.status == "past_due":
            retried = client.subscriptions.retry(sub.id)
            client.sandbox.tick()
            sub = client.subscriptions.retrieve(sub.id)
            run.say(f"retry ({retried.status}), reconciler runs: {sub.status}")
        charges = client.subscriptions.charges(sub.id).items
        run.outcome["charges"] = [c.status for c in charges]
        run.say(f"charges: {', '.join(c.status for c in charges) or 'none'}")
        if sub.status == "active":
            receipt = client.subscriptions.charge_now(sub.id)
            with run.unrecorded(client):
                wait_for_subscription(client, sub.id, between=client.sandbox.tick)
            sub = client.subscriptions.retrieve(sub.id)
            run.say(f"charge-now ({receipt.status}), polled until it left charging: {sub.status}")
            run.outcome["after_charge_now"] = sub.status
            paused = client.subscriptions.pause(sub.id)
            resumed = client.subscriptions.resume(sub.id)
            before = sub.cycle_number or 0
            subscription_id = sub.id
            with run.unrecorded(client):
                wait_until(
                    lambda: client.subscriptions.retrieve(subscription_id),
                    lambda s: (s.cycle_number or 0) > before,
                    between=client.sandbox.tick,
                )
            sub = client.subscriptions.retrieve(sub.id)
            run.say(
                f"pause: {paused.status}; resume: {resumed.status}, charged on the next "
                f"reconciler pass: cycle {sub.cycle_number}"
            )
            later = client.subscriptions.cancel(sub.id, at_period_end=True)
            run.outcome["cancel_at_period_end"] = later.cancel_at_period_end
            flag = later.cancel_at_period_end
            run.say(f"cancel at period end: {later.status}, cancelAtPeriodEnd={flag}")
        ended = client.subscriptions.cancel(sub.id, at_period_end=False, reason="flow finished")
        run.say(f"cancel now: {ended.status}")
        sub = client.subscriptions.retrieve(sub.id)
        run.outcome.update(cycle_number=sub.cycle_number, final_status=sub.status)
    return run
