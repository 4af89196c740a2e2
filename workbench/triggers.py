"""Make the sandbox send one event, like ``stripe trigger``: the calls behind ``workbench trigger``.

Each trigger makes, with the ordinary client, the objects whose change sends its event
(a charge, a refund, a checkout session paid on its hosted page, a subscription moved
along the sandbox's business clock), so a webhook handler can be exercised without
writing the flow. Triggers that need the local sandbox's control routes (the clock,
the 3-D Secure page, refund settlement) say so in `Trigger.needs_control`.

`trigger` returns the events the run made, read back from ``GET /sandbox/events``, with
the one asked for marked: the objects' earlier events (a refund's payment was captured
first) are made too, as they would be on the service.

The objects can be made with your own data: ``overrides`` replace values a trigger sends
anyway (`Trigger.sends`: the amount, the transactionId...) and ``additions`` add fields it
leaves out (`Trigger.takes`: installments, a customer...). Every value is checked against
the service's limits before anything is made (`check_values`), and the event the run
made is checked to carry them.
"""

from __future__ import annotations

import dataclasses
import re
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

import httpx2

from workbench._exceptions import DeclineError
from workbench._transport import default_ssl_context
from workbench.money import format_try
from workbench.spec import limits
from workbench.spec.ids import IdPrefix
from workbench.spec.limits import SESSION_LIFETIME_SECONDS

if TYPE_CHECKING:
    from workbench._client import Client
    from workbench.models import SandboxEvent, SandboxFixtures, Subscription

__all__ = [
    "FIELDS",
    "TRIGGERS",
    "Trigger",
    "TriggerError",
    "TriggerValueError",
    "Triggered",
    "check_values",
    "trigger",
]

#: The card every trigger pays with unless its event needs another.
_APPROVED = "tok_test_success"
_DECLINED = "tok_test_declined"
_CHALLENGED = "tok_test_3ds_challenge"
_FAILS_3DS = "tok_test_3ds_fail"
_REFUND_ASYNC = "tok_test_refund_async"
_AMOUNT = 15_000
#: The reason of a trigger's void or cancel, and its subscriptions' description.
_REASON = "workbench trigger"
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


class TriggerValueError(TriggerError):
    """A value given for a trigger's objects that its event cannot take; nothing was made.

    Attributes:
        field: the field, by its wire name (``amount``, ``transactionId``...).
    """

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field


# --- the values a trigger can be given ------------------------------------------------------


def _integer(field: str, text: str, low: int, high: int, unit: str = "") -> int:
    if not re.fullmatch(r"[0-9]+", text.strip()):
        raise TriggerValueError(field, f"{field} is a whole number{unit}, not {text!r}")
    value = int(text)
    if not low <= value <= high:
        raise TriggerValueError(field, f"{field} is {low}..{high}{unit}, not {value}")
    return value


def _amount(text: str) -> int:
    return _integer("amount", text, limits.MIN_AMOUNT, limits.MAX_AMOUNT, " of kuruş")


def _installments(text: str) -> int:
    return _integer("installments", text, limits.INSTALLMENTS_MIN, limits.INSTALLMENTS_MAX)


def _transaction_id(text: str) -> str:
    if not text or len(text) > limits.TRANSACTION_ID_MAX or "\x00" in text:
        raise TriggerValueError(
            "transactionId", f"transactionId is 1..{limits.TRANSACTION_ID_MAX} characters"
        )
    if text.startswith(limits.RENEWAL_TRANSACTION_PREFIX):
        raise TriggerValueError(
            "transactionId",
            f"transactionId may not start with {limits.RENEWAL_TRANSACTION_PREFIX!r} "
            "(kept for renewals)",
        )
    return text


def _customer_id(text: str) -> str:
    if not text.startswith(IdPrefix.CUSTOMER.value) or len(text) > 64:
        raise TriggerValueError("customerId", f"customerId is a cus_ id, not {text!r}")
    return text


def _text(field: str, most: int) -> Callable[[str], str]:
    def parse(text: str) -> str:
        if not text.strip() or len(text) > most or "\x00" in text:
            raise TriggerValueError(field, f"{field} is 1..{most} characters")
        return text

    return parse


@dataclass(frozen=True)
class _Field:
    parse: Callable[[str], object]
    summary: str


#: Every field a trigger's objects can be given, by its wire name.
FIELDS: dict[str, _Field] = {
    "amount": _Field(_amount, f"kuruş, {limits.MIN_AMOUNT} or more"),
    "transactionId": _Field(_transaction_id, "your order's id (the payment's or session's)"),
    "customerId": _Field(_customer_id, "a customer of the merchant (cus_...)"),
    "description": _Field(_text("description", 500), "the session's or subscription's"),
    "installments": _Field(_installments, "the charge's installment count, 1..12"),
    "reason": _Field(_text("reason", limits.VOID_REASON_MAX), "the void's or cancel's reason"),
}


@dataclass
class _Run:
    """What a trigger did, step by step, and the object whose event it was asked for."""

    client: Client
    #: The values given for the objects (checked), by wire name.
    values: dict[str, Any] = field(default_factory=dict)
    steps: list[str] = field(default_factory=list)
    object_id: str = ""
    #: The last transaction id made: names the payment of a charge that was declined.
    transaction: str = ""

    def say(self, step: str) -> None:
        self.steps.append(step)

    def transaction_id(self) -> str:
        self.transaction = self.values.get("transactionId") or f"trigger-{uuid.uuid4().hex[:12]}"
        return self.transaction

    @property
    def amount(self) -> int:
        return int(self.values.get("amount", _AMOUNT))

    def card_extras(self) -> dict[str, Any]:
        """A charge's fields given with ``additions`` (installments, a customer)."""
        extras: dict[str, Any] = {}
        if "installments" in self.values:
            extras["installment_count"] = self.values["installments"]
        if "customerId" in self.values:
            extras["customer_id"] = self.values["customerId"]
        return extras

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
        sends: the fields of `FIELDS` it sends anyway, which ``overrides`` may replace.
        takes: the fields it leaves out, which ``additions`` may give.
        card: the test card a charge trigger pays with (its type bounds installments).
    """

    event: str
    summary: str
    needs_control: bool
    run: Callable[[_Run], None] = field(repr=False)
    sends: frozenset[str] = frozenset()
    takes: frozenset[str] = frozenset()
    card: str | None = None


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
        amount=run.amount,
        card_token=token,
        three_d_secure=three_ds,
        capture=capture,
        **run.card_extras(),
    )
    kind = "charge" if capture else "preauthorize"
    run.say(f"{kind} {format_try(run.amount)} with {token}: {charge.id} {charge.status}")
    run.object_id = charge.id
    return charge.id


def _captured(run: _Run) -> None:
    _charge(run)


def _authorized(run: _Run) -> None:
    _charge(run, capture=False)


def _voided(run: _Run) -> None:
    payment_id = _charge(run, capture=False)
    voided = run.client.payments.void(payment_id, reason=run.values.get("reason", _REASON))
    run.say(f"void {payment_id}: {voided.status}")


def _declined(run: _Run) -> None:
    token = _DECLINED
    try:
        run.client.payments.charge_card(
            transaction_id=run.transaction_id(),
            amount=run.amount,
            card_token=token,
            three_d_secure=False,
            **run.card_extras(),
        )
    except DeclineError as err:
        run.say(f"charge {format_try(run.amount)} with {token}: {type(err).__name__} {err.code}")
        return
    raise TriggerError(f"{token} was not declined")


def _challenged(run: _Run, token: str) -> tuple[str, str]:
    charge = run.client.payments.charge_card(
        transaction_id=run.transaction_id(),
        amount=run.amount,
        card_token=token,
        three_d_secure=True,
        **run.card_extras(),
    )
    run.object_id = charge.id
    run.say(f"charge {format_try(run.amount)} with {token}: {charge.id} {charge.status}")
    if not charge.correlation_id:
        raise TriggerError(f"{token} was not challenged")
    return charge.id, charge.correlation_id


def _pending_3ds(run: _Run) -> None:
    _challenged(run, _CHALLENGED)


def _failed(run: _Run) -> None:
    payment_id, correlation_id = _challenged(run, _FAILS_3DS)
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
    payment_id = _charge(run, _REFUND_ASYNC)
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
        transaction_id=run.transaction_id(),
        amount=run.amount,
        return_url=base + _RETURN_PATH,
        description=run.values.get("description"),
        customer_id=run.values.get("customerId"),
    )
    run.object_id = session.id
    run.say(f"create a checkout session for {format_try(run.amount)}: {session.id}")
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
    default = fixtures.customers[0].id if fixtures.customers else _CUSTOMER
    unit, count = interval
    customer = run.values.get("customerId", default)
    sub = run.client.subscriptions.create(
        store_id=fixtures.store_id,
        customer_id=customer,
        amount_minor=run.amount,
        interval_count=count,
        interval_unit=unit,
        card_token=token,
        trial_end_at=trial_end,
        description=run.values.get("description", _REASON),
    )
    run.object_id = sub.id
    plan = f"{format_try(run.amount)} every {count} {unit} with {token}"
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
    reason = run.values.get("reason", _REASON)
    done = run.client.subscriptions.cancel(sub.id, at_period_end=True, reason=reason)
    run.say(f"cancel {sub.id} at the period's end: cancelAtPeriodEnd={done.cancel_at_period_end}")


def _cancelled(run: _Run) -> None:
    sub = _subscribe(run)
    reason = run.values.get("reason", _REASON)
    done = run.client.subscriptions.cancel(sub.id, at_period_end=False, reason=reason)
    run.say(f"cancel {sub.id} now: {done.status}")


def _card_updated(run: _Run) -> None:
    sub = _subscribe(run)
    if not sub.public_hash:
        raise TriggerError(f"{sub.id} came without its portal hash")
    session = run.client.portal.update_card_session(sub.public_hash)
    run.say(f"the buyer asks the portal for a card-update page: {session.id}")
    _pay_hosted_page(run, session.checkout_url)


_CHARGE_FIELDS = (frozenset({"amount", "transactionId"}), frozenset({"installments", "customerId"}))
#: What each kind of trigger sends and takes, by the event's first word.
_FIELDS_BY_KIND = {
    "payment": _CHARGE_FIELDS,
    "refund": _CHARGE_FIELDS,
    "session": (frozenset({"amount", "transactionId"}), frozenset({"description", "customerId"})),
    "subscription": (frozenset({"amount", "customerId", "description"}), frozenset()),
}
#: The card of each charge trigger that does not pay with `_APPROVED`.
_CARDS = {
    "payment.declined": _DECLINED,
    "payment.3ds_pending": _CHALLENGED,
    "payment.failed": _FAILS_3DS,
    "refund.pending": _REFUND_ASYNC,
    "refund.settled": _REFUND_ASYNC,
}
#: The triggers that also send a reason (a void's, a cancel's).
_WITH_REASON = ("payment.voided", "subscription.cancel_scheduled", "subscription.cancelled")


def _triggers(*found: Trigger) -> dict[str, Trigger]:
    table = {}
    for entry in found:
        sends, takes = _FIELDS_BY_KIND[entry.event.partition(".")[0]]
        if entry.event in _WITH_REASON:
            sends = sends | {"reason"}
        card = _CARDS.get(entry.event, _APPROVED) if "installments" in takes else None
        table[entry.event] = dataclasses.replace(entry, sends=sends, takes=takes, card=card)
    return table


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


def check_values(
    event: str,
    overrides: Mapping[str, str] | None = None,
    additions: Mapping[str, str] | None = None,
    *,
    client: Client | None = None,
) -> dict[str, Any]:
    """The values for ``event``'s objects, parsed and checked; nothing is made.

    Args:
        event: an event type of `TRIGGERS`.
        overrides: values for fields the trigger sends anyway (`Trigger.sends`), as text.
        additions: values for fields it leaves out (`Trigger.takes`), as text.
        client: when given, the merchant's fixtures are read (nothing is made) to check
            that a ``customerId`` is one of its customers and that ``installments`` above
            1 go on a credit card (`Trigger.card`).

    Returns:
        The values by wire name, typed (``amount`` an ``int`` of kuruş...).

    Raises:
        TriggerError: ``event`` is not one the sandbox sends.
        TriggerValueError: a field the event has no place for, or a value it cannot take;
            the error names the field.
    """
    found = TRIGGERS.get(event)
    if found is None:
        raise TriggerError(f"no trigger for {event!r}; `workbench trigger --list` names them")
    values: dict[str, Any] = {}
    for given, allowed, other, flag in (
        (overrides or {}, found.sends, found.takes, "--add"),
        (additions or {}, found.takes, found.sends, "--override"),
    ):
        for name, text in given.items():
            if name not in FIELDS:
                raise TriggerValueError(
                    name, f"{name!r} is not a field a trigger takes (one of {', '.join(FIELDS)})"
                )
            if name not in allowed:
                hint = f"; give it with {flag}" if name in other else ""
                can = ", ".join(sorted(allowed)) or "none"
                raise TriggerValueError(
                    name, f"{event} has no place for {name} here (these: {can}){hint}"
                )
            if name in values:
                raise TriggerValueError(name, f"{name} is given twice")
            values[name] = FIELDS[name].parse(text)
    if client is not None and ("customerId" in values or values.get("installments", 1) > 1):
        _check_fixtures(client.sandbox.fixtures(), found, values)
    return values


def _check_fixtures(fixtures: SandboxFixtures, found: Trigger, values: Mapping[str, Any]) -> None:
    customer = values.get("customerId")
    if customer is not None and customer not in {c.id for c in fixtures.customers}:
        raise TriggerValueError("customerId", f"{customer} is not a customer of this merchant")
    kinds = {card.token: card.card_type for card in fixtures.test_cards}
    if values.get("installments", 1) > 1 and kinds.get(found.card or "") == "debit":
        raise TriggerValueError(
            "installments",
            f"{found.event} charges {found.card}, a debit card: installments is 1 for it",
        )


#: Where an event's data holds a given field's value, by the field's wire name.
_EVENT_KEYS = {
    "amount": ("amount", "amountMinor"),
    "transactionId": ("transactionId",),
    "customerId": ("customerId",),
    "reason": ("reason",),
}


def _check_event(event: SandboxEvent, values: Mapping[str, Any]) -> None:
    """The event the run made carries the values it was given (those its data holds)."""
    for name, value in values.items():
        for key in _EVENT_KEYS.get(name, ()):
            if key in event.data and event.data[key] != value:
                raise TriggerError(
                    f"{event.type} carries {key} {event.data[key]!r}, not the {value!r} given"
                )


def trigger(
    client: Client,
    event: str,
    *,
    overrides: Mapping[str, str] | None = None,
    additions: Mapping[str, str] | None = None,
) -> Triggered:
    """Make the sandbox send ``event``; the steps taken and the events made.

    Args:
        client: a client of the sandbox (the local one for a trigger that
            `Trigger.needs_control`).
        event: an event type of `TRIGGERS`.
        overrides: values, as text, for fields the trigger sends anyway
            (`Trigger.sends`: ``{"amount": "25000"}``).
        additions: values, as text, for fields it leaves out (`Trigger.takes`:
            ``{"installments": "3"}``).

    Returns:
        What was done and the events the run made, read back from the sandbox; a
        reconciler pass has run, so the deliveries that were due have been attempted.

    Raises:
        TriggerError: ``event`` is not one the sandbox sends, or the run did not send it
            (or sent it without the values given).
        TriggerValueError: a value the event cannot take, before anything is made.
    """
    values = check_values(event, overrides, additions, client=client)
    found = TRIGGERS[event]
    before = {e.id for e in client.sandbox.events().items}
    run = _Run(client, values)
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
    for made_event in result.matching:
        _check_event(made_event, values)
    return result
