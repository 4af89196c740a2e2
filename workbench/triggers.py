"""Make the sandbox send one event, like ``stripe trigger``: the calls behind ``workbench trigger``.

Each trigger makes, with the ordinary client, the objects whose change sends its event
(a charge, a refund, a checkout session paid on its hosted page, a subscription moved
along the sandbox's business clock), so a webhook handler can be exercised without
writing the flow. Triggers that need the local sandbox's control routes (the clock,
the 3-D Secure page, refund settlement) say so in `Trigger.needs_control`.

`trigger` returns the events the run made, read back from ``GET /sandbox/events``, with
the one asked for marked: the objects' earlier events (a refund's payment was captured
first) are made too, as they would be on the service.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

import httpx2

from workbench._exceptions import DeclineError
from workbench._transport import default_ssl_context
from workbench.money import format_try
from workbench.spec.limits import SESSION_LIFETIME_SECONDS

if TYPE_CHECKING:
    from workbench._client import Client
    from workbench.models import SandboxEvent, SandboxFixtures, Subscription

__all__ = ["TRIGGERS", "Trigger", "TriggerError", "Triggered", "trigger"]

#: The card every trigger pays with unless its event needs another.
_APPROVED = "tok_test_success"
_AMOUNT = 15_000
#: The sandbox's built-in customer that subscriptions are made for.
_CUSTOMER = "cus_demo_ayse"
#: Where a checkout session sends the buyer back (the sandbox's demo return page).
_RETURN_PATH = "/demo/merchant/return"
#: A subscription is monthly, unless its trigger moves the clock to a renewal: then daily,
#: so the move costs the merchant's business clock a day, not a month.
_MONTHLY = ("month", 1)
_DAILY = ("day", 1)
#: A trial's ``subscription.trial_will_end`` comes 3 days before it ends (sandbox).
_TRIAL_DAYS = 4
#: Enough clock moves to go through a failing subscription's retries to ``expired``.
_MAX_RETRIES = 8
#: The key of an event's ``data`` naming its object, by the type's first word.
_OBJECT_KEYS = {
    "payment": "paymentId",
    "refund": "paymentId",
    "session": "sessionId",
    "subscription": "subscriptionId",
}


class TriggerError(Exception):
    """The trigger could not make its event (unknown name, or the run did not send it)."""


@dataclass
class _Run:
    """What a trigger did, step by step, and the object whose event it was asked for."""

    client: Client
    steps: list[str] = field(default_factory=list)
    object_id: str = ""
    #: The last transaction id made: names the payment of a charge that was declined.
    transaction: str = ""

    def say(self, step: str) -> None:
        self.steps.append(step)

    def transaction_id(self) -> str:
        self.transaction = f"trigger-{uuid.uuid4().hex[:12]}"
        return self.transaction

    def fixtures(self) -> SandboxFixtures:
        return self.client.sandbox.fixtures()


@dataclass(frozen=True)
class Trigger:
    """One event the sandbox can be made to send.

    Attributes:
        event: the event type, e.g. ``payment.captured``.
        summary: what the trigger does to make it happen.
        needs_control: whether it uses the local sandbox's control routes (clock,
            3-D Secure page, refund settlement), so works only against the local sandbox.
    """

    event: str
    summary: str
    needs_control: bool
    run: Callable[[_Run], None] = field(repr=False)


@dataclass(frozen=True)
class Triggered:
    """The outcome of `trigger`.

    Attributes:
        event: the event type asked for.
        object_id: the payment, session or subscription it is about.
        steps: what was done, one line per call.
        events: every event the run made, oldest first.
    """

    event: str
    object_id: str
    steps: list[str]
    events: list[SandboxEvent]

    @staticmethod
    def object_of(event: SandboxEvent) -> str | None:
        """The payment, subscription or session an event is about."""
        return _object_of(event)

    @property
    def matching(self) -> list[SandboxEvent]:
        """The events of the asked type about the trigger's object."""
        return [e for e in self.events if e.type == self.event and _object_of(e) == self.object_id]


def _object_of(event: SandboxEvent) -> str | None:
    key = _OBJECT_KEYS.get(event.type.partition(".")[0], "")
    value = event.data.get(key)
    return value if isinstance(value, str) else None


# --- payments -----------------------------------------------------------------------------


def _charge(
    run: _Run, token: str = _APPROVED, *, capture: bool = True, three_ds: bool = False
) -> str:
    charge = run.client.payments.charge_card(
        transaction_id=run.transaction_id(),
        amount=_AMOUNT,
        card_token=token,
        three_d_secure=three_ds,
        capture=capture,
    )
    kind = "charge" if capture else "preauthorize"
    run.say(f"{kind} {format_try(_AMOUNT)} with {token}: {charge.payment_id} {charge.status}")
    run.object_id = charge.payment_id
    return charge.payment_id


def _captured(run: _Run) -> None:
    _charge(run)


def _authorized(run: _Run) -> None:
    _charge(run, capture=False)


def _voided(run: _Run) -> None:
    payment_id = _charge(run, capture=False)
    voided = run.client.payments.void(payment_id, reason="workbench trigger")
    run.say(f"void {payment_id}: {voided.status}")


def _declined(run: _Run) -> None:
    token = "tok_test_declined"
    try:
        run.client.payments.charge_card(
            transaction_id=run.transaction_id(),
            amount=_AMOUNT,
            card_token=token,
            three_d_secure=False,
        )
    except DeclineError as err:
        run.say(f"charge {format_try(_AMOUNT)} with {token}: {type(err).__name__} {err.code}")
        return
    raise TriggerError(f"{token} was not declined")


def _challenged(run: _Run, token: str) -> tuple[str, str]:
    charge = run.client.payments.charge_card(
        transaction_id=run.transaction_id(),
        amount=_AMOUNT,
        card_token=token,
        three_d_secure=True,
    )
    run.object_id = charge.payment_id
    run.say(f"charge {format_try(_AMOUNT)} with {token}: {charge.payment_id} {charge.status}")
    if not charge.correlation_id:
        raise TriggerError(f"{token} was not challenged")
    return charge.payment_id, charge.correlation_id


def _pending_3ds(run: _Run) -> None:
    _challenged(run, "tok_test_3ds_challenge")


def _failed(run: _Run) -> None:
    payment_id, correlation_id = _challenged(run, "tok_test_3ds_fail")
    answer = run.client.sandbox.answer_challenge(payment_id, correlation_id)
    run.say(f"the buyer answers the 3-D Secure page: result {answer.result}")
    try:
        run.client.payments.complete_3ds(
            payment_id, pares=answer.pares, correlation_id=correlation_id
        )
    except DeclineError as err:
        run.say(f"3ds-callback: {err.code}")
        return
    raise TriggerError("the 3-D Secure challenge did not fail")


def _refunded(run: _Run) -> None:
    payment_id = _charge(run)
    refund = run.client.payments.refund(payment_id)
    run.say(f"refund {payment_id} in full: {'in flight (202)' if refund.in_flight else 'done'}")


def _refund_in_flight(run: _Run) -> None:
    payment_id = _charge(run, "tok_test_refund_async")
    refund = run.client.payments.refund(payment_id)
    run.say(f"refund {payment_id} in full: {'in flight (202)' if refund.in_flight else 'done'}")


def _refund_settled(run: _Run) -> None:
    _refund_in_flight(run)
    settled = run.client.sandbox.settle()
    run.say(f"the bank confirms in-flight refunds: {settled.settled} settled")


# --- checkout sessions --------------------------------------------------------------------


def _session(run: _Run) -> str:
    base = run.client.base_url.rstrip("/")
    session = run.client.sessions.create(
        transaction_id=run.transaction_id(), amount=_AMOUNT, return_url=base + _RETURN_PATH
    )
    run.object_id = session.session_id
    run.say(f"create a checkout session for {format_try(_AMOUNT)}: {session.session_id}")
    return session.checkout_url


def _card_number(run: _Run, token: str) -> str:
    for card in run.fixtures().test_cards:
        if card.token == token and card.number:
            return card.number
    raise TriggerError(f"the sandbox lists no card number for {token}")


def _pay_hosted_page(run: _Run, checkout_url: str) -> None:
    """Submit the hosted page's card form as the buyer's browser would."""
    form = {
        "cardNumber": _card_number(run, _APPROVED),
        "expiry": "12/30",
        "cvc": "123",
        "holder": "Ayse Yilmaz",
        "installments": "1",
    }
    with httpx2.Client(timeout=10, follow_redirects=False, verify=default_ssl_context()) as browser:
        answer = browser.post(f"{checkout_url}/pay", data=form)
    if answer.status_code >= 400:
        raise TriggerError(f"the hosted page refused the card: HTTP {answer.status_code}")
    run.say(f"the buyer pays on the hosted page with test card {_APPROVED}")


def _session_completed(run: _Run) -> None:
    _pay_hosted_page(run, _session(run))


def _session_expired(run: _Run) -> None:
    _session(run)
    seconds = SESSION_LIFETIME_SECONDS + 60
    moved = run.client.sandbox.advance_clock(seconds)
    run.say(
        f"move the clock {seconds} s, past the session's lifetime: {_time(moved.business_time)}"
    )


# --- subscriptions ------------------------------------------------------------------------


def _time(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def _subscribe(
    run: _Run,
    token: str = _APPROVED,
    *,
    trial_end: datetime | None = None,
    interval: tuple[str, int] = _MONTHLY,
) -> Subscription:
    fixtures = run.fixtures()
    # The merchant's own first customer (a merchant made on demand has its own ids).
    customer = fixtures.customers[0].id if fixtures.customers else _CUSTOMER
    unit, count = interval
    sub = run.client.subscriptions.create(
        store_id=fixtures.store_id,
        customer_id=customer,
        amount_minor=_AMOUNT,
        interval_count=count,
        interval_unit=unit,
        card_token=token,
        trial_end_at=trial_end,
        description="workbench trigger",
    )
    run.object_id = sub.id
    plan = f"{format_try(_AMOUNT)} every {count} {unit} with {token}"
    run.say(f"subscribe {customer} to {plan}: {sub.id} {sub.status}")
    return sub


def _to_next_charge(run: _Run, sub: Subscription) -> Subscription:
    """Move the clock a second past the subscription's next charge; the subscription after."""
    if sub.next_charge_at is None:
        raise TriggerError(f"{sub.id} has no next charge ({sub.status})")
    now = run.fixtures().business_time
    assert now is not None
    seconds = max(1, int((sub.next_charge_at - now).total_seconds()) + 1)
    run.client.sandbox.advance_clock(seconds)
    after = run.client.subscriptions.retrieve(sub.id)
    run.say(f"move the clock past its next charge ({_time(sub.next_charge_at)}): {after.status}")
    return after


def _created(run: _Run) -> None:
    _subscribe(run)


def _renewed(run: _Run) -> None:
    _to_next_charge(run, _subscribe(run, interval=_DAILY))


def _past_due(run: _Run) -> None:
    _to_next_charge(run, _subscribe(run, "tok_test_renewal_fails", interval=_DAILY))


def _expired(run: _Run) -> None:
    sub = _subscribe(run, "tok_test_renewal_fails", interval=_DAILY)
    for _ in range(_MAX_RETRIES):
        sub = _to_next_charge(run, sub)
        if sub.status == "expired":
            return
    raise TriggerError(f"{sub.id} did not expire ({sub.status})")


def _trial_will_end(run: _Run) -> None:
    now = run.fixtures().business_time
    assert now is not None
    sub = _subscribe(run, trial_end=now + timedelta(days=_TRIAL_DAYS))
    seconds = 24 * 3600 + 60
    run.client.sandbox.advance_clock(seconds)
    run.say(f"move the clock {seconds} s, to 3 days before the trial ends ({sub.status})")


def _paused(run: _Run) -> None:
    sub = _subscribe(run)
    run.say(f"pause {sub.id}: {run.client.subscriptions.pause(sub.id).status}")


def _resumed(run: _Run) -> None:
    _paused(run)
    run.say(f"resume {run.object_id}: {run.client.subscriptions.resume(run.object_id).status}")


def _cancel_scheduled(run: _Run) -> None:
    sub = _subscribe(run)
    done = run.client.subscriptions.cancel(sub.id, at_period_end=True, reason="workbench trigger")
    run.say(f"cancel {sub.id} at the period's end: cancelAtPeriodEnd={done.cancel_at_period_end}")


def _cancelled(run: _Run) -> None:
    sub = _subscribe(run)
    done = run.client.subscriptions.cancel(sub.id, at_period_end=False, reason="workbench trigger")
    run.say(f"cancel {sub.id} now: {done.status}")


def _card_updated(run: _Run) -> None:
    sub = _subscribe(run)
    if not sub.public_hash:
        raise TriggerError(f"{sub.id} came without its portal hash")
    session = run.client.portal.update_card_session(sub.public_hash)
    run.say(f"the buyer asks the portal for a card-update page: {session.session_id}")
    _pay_hosted_page(run, session.checkout_url)


def _triggers(*found: Trigger) -> dict[str, Trigger]:
    return {t.event: t for t in found}


#: Every event the sandbox sends, and how to make it happen.
TRIGGERS: dict[str, Trigger] = _triggers(
    Trigger("payment.captured", "charge a test card", False, _captured),
    Trigger("payment.authorized", "preauthorize a test card (capture=False)", False, _authorized),
    Trigger("payment.voided", "preauthorize, then void", False, _voided),
    Trigger("payment.declined", "charge tok_test_declined", False, _declined),
    Trigger("payment.3ds_pending", "charge a card that asks for 3-D Secure", False, _pending_3ds),
    Trigger(
        "payment.failed",
        "charge tok_test_3ds_fail and fail its 3-D Secure page",
        True,
        _failed,
    ),
    Trigger("payment.refunded", "charge, then refund in full", False, _refunded),
    Trigger(
        "refund.pending", "charge tok_test_refund_async, then refund", False, _refund_in_flight
    ),
    Trigger(
        "refund.settled",
        "charge tok_test_refund_async, refund, settle in-flight refunds",
        True,
        _refund_settled,
    ),
    Trigger(
        "session.completed",
        "create a checkout session, pay its hosted page by card",
        False,
        _session_completed,
    ),
    Trigger(
        "session.expired",
        "create a checkout session, move the clock past its lifetime",
        True,
        _session_expired,
    ),
    Trigger("subscription.created", "subscribe the demo customer", False, _created),
    Trigger(
        "subscription.renewed",
        "subscribe daily, move the clock a day, past the next charge",
        True,
        _renewed,
    ),
    Trigger(
        "subscription.renewal_failed",
        "subscribe daily with tok_test_renewal_fails, move the clock a day",
        True,
        _past_due,
    ),
    Trigger(
        "subscription.past_due",
        "subscribe daily with tok_test_renewal_fails, move the clock a day",
        True,
        _past_due,
    ),
    Trigger(
        "subscription.expired",
        "subscribe daily with tok_test_renewal_fails, move the clock through every retry",
        True,
        _expired,
    ),
    Trigger(
        "subscription.trial_will_end",
        "subscribe with a 4-day trial, move the clock a day",
        True,
        _trial_will_end,
    ),
    Trigger("subscription.paused", "subscribe, then pause", False, _paused),
    Trigger("subscription.resumed", "subscribe, pause, then resume", False, _resumed),
    Trigger(
        "subscription.cancel_scheduled",
        "subscribe, then cancel at the period's end",
        False,
        _cancel_scheduled,
    ),
    Trigger("subscription.cancelled", "subscribe, then cancel now", False, _cancelled),
    Trigger(
        "subscription.card_updated",
        "subscribe, pay the portal's card-update page",
        False,
        _card_updated,
    ),
)


def trigger(client: Client, event: str) -> Triggered:
    """Make the sandbox send ``event``; the steps taken and the events made.

    Args:
        client: a client of the sandbox (the local one for a trigger that
            `Trigger.needs_control`).
        event: an event type of `TRIGGERS`.

    Returns:
        What was done and the events the run made, read back from the sandbox; a
        reconciler pass has run, so the deliveries that were due have been attempted.

    Raises:
        TriggerError: ``event`` is not one the sandbox sends, or the run did not send it.
    """
    found = TRIGGERS.get(event)
    if found is None:
        raise TriggerError(f"no trigger for {event!r}; `workbench trigger --list` names them")
    before = {e.id for e in client.sandbox.events().items}
    run = _Run(client)
    found.run(run)
    client.sandbox.tick()
    made = [e for e in client.sandbox.events().items if e.id not in before]
    if not run.object_id:  # a declined charge: its payment is named by its events
        run.object_id = next(
            (_object_of(e) or "" for e in made if e.data.get("transactionId") == run.transaction),
            "",
        )
    result = Triggered(event, run.object_id, run.steps, made)
    if not result.matching:
        raise TriggerError(f"the run made no {event} event for {run.object_id or 'its object'}")
    return result
