"""The events the service sends: one typed definition of each event type's ``data``.

Written once, read three ways: the sandbox builds every event's ``data`` through these
models (`workbench.sandbox.events.emit` refuses a field they do not name), the OpenAPI
document's ``webhooks`` section is generated from them with their examples, and the
client's typed events (`workbench.webhooks`) parse a delivery into them. So what the
sandbox sends, what the document promises and what the client reads cannot disagree.

The spec names ``payment.voided`` only; every other event type and every payload field
is the sandbox's choice (``docs/sandbox/decisions.md``, Events and webhooks).

A model's attributes are snake_case over the wire's camelCase, as in the client's
results. Unknown fields are kept (a newer service may add one), and a model also reads
like the JSON object it came from: ``data["paymentId"]``, ``data.get("reason")``.

Example:
    ```pycon
    >>> data = PaymentVoidedData(
    ...     payment_id="pay_1", transaction_id="ord-1", status="voided",
    ...     amount=15_000, currency="TRY", reason="customer changed their mind",
    ... )
    >>> data.wire()["transactionId"], data["reason"]
    ('ord-1', 'customer changed their mind')
    ```
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Annotated, Any, ClassVar

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    PlainSerializer,
    WithJsonSchema,
)
from pydantic.alias_generators import to_camel

from workbench.spec.ids import IdPrefix

__all__ = [
    "EVENT_TYPES",
    "EventData",
    "EventType",
    "PaymentAuthorizedData",
    "PaymentCapturedData",
    "PaymentDeclinedData",
    "PaymentEventData",
    "PaymentFailedData",
    "PaymentRefundedData",
    "PaymentThreeDSPendingData",
    "PaymentVoidedData",
    "RefundEventData",
    "RefundPendingData",
    "RefundSettledData",
    "SessionCompletedData",
    "SessionExpiredData",
    "SubscriptionCancelScheduledData",
    "SubscriptionCancelledData",
    "SubscriptionCardUpdatedData",
    "SubscriptionCreatedData",
    "SubscriptionEventData",
    "SubscriptionExpiredData",
    "SubscriptionPastDueData",
    "SubscriptionPausedData",
    "SubscriptionRenewalFailedData",
    "SubscriptionRenewedData",
    "SubscriptionResumedData",
    "SubscriptionTrialWillEndData",
    "event_type",
]


def _as_utc(value: datetime) -> datetime:
    if value.tzinfo is None:
        return value.replace(tzinfo=UTC)
    return value.astimezone(UTC)


def _z(value: datetime) -> str:
    return value.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


#: An amount in integer kuruş: a float or a numeric string is refused, never rounded.
Kurus = Annotated[int, Field(strict=True, ge=0)]
#: A moment: an aware UTC datetime in Python, ``YYYY-MM-DDTHH:MM:SSZ`` on the wire.
Moment = Annotated[
    datetime,
    AfterValidator(_as_utc),
    PlainSerializer(_z, return_type=str, when_used="json"),
    WithJsonSchema({"type": "string", "format": "date-time"}),
]


def _id(prefix: IdPrefix, *default: None) -> Any:
    """A field holding an id that starts with ``prefix`` (optional when given a default)."""
    return Field(*default, pattern=f"^{prefix.value}")


class EventData(BaseModel):
    """The ``data`` of an event: typed attributes, and read like the JSON object it is.

    Attributes:
        event_type: the event type this model is the ``data`` of (a class attribute).
    """

    model_config = ConfigDict(
        alias_generator=to_camel,
        populate_by_name=True,
        extra="allow",
        frozen=True,
        defer_build=True,  # built when first used: a sandbox start builds none of them
    )

    event_type: ClassVar[str] = ""

    def wire(self) -> dict[str, Any]:
        """The JSON object sent: camelCase keys, only the fields that were given."""
        return self.model_dump(mode="json", by_alias=True, exclude_unset=True)

    def __getitem__(self, key: str) -> Any:
        """The value of the wire's field ``key`` (``KeyError`` when the event has none)."""
        return self.wire()[key]

    def __contains__(self, key: object) -> bool:
        return key in self.wire()

    def get(self, key: str, default: Any = None) -> Any:
        """The value of the wire's field ``key``, or ``default``."""
        return self.wire().get(key, default)

    def keys(self) -> Iterator[str]:
        """The wire's field names."""
        return iter(self.wire())


# --- payments --------------------------------------------------------------------------------


class PaymentEventData(EventData):
    """What every ``payment.*`` event carries (``payment.refunded`` carries a refund's).

    Attributes:
        payment_id: the payment (``pay_…``).
        transaction_id: your ``transactionId`` of the charge (``renewal …`` for a renewal).
        status: the payment's status after the change.
        amount: the payment's amount in kuruş.
        currency: ``TRY``.
        subscription_id: the subscription whose renewal made the payment, if one did.
    """

    payment_id: str = _id(IdPrefix.PAYMENT)
    transaction_id: str
    status: str
    amount: Kurus
    currency: str
    subscription_id: str | None = _id(IdPrefix.SUBSCRIPTION, None)


class PaymentCapturedData(PaymentEventData):
    """``payment.captured``: money moved (a charge, a capture, a 3-D Secure pass, TR QR).

    Attributes:
        method: ``tr_qr`` for a TR QR payment; absent for a card.
    """

    event_type: ClassVar[str] = "payment.captured"
    method: str | None = None


class PaymentAuthorizedData(PaymentEventData):
    """``payment.authorized``: a preauthorization (``capture=False``) was approved."""

    event_type: ClassVar[str] = "payment.authorized"


class PaymentThreeDSPendingData(PaymentEventData):
    """``payment.3ds_pending``: the charge waits for the buyer's 3-D Secure challenge."""

    event_type: ClassVar[str] = "payment.3ds_pending"


class PaymentDeclinedData(PaymentEventData):
    """``payment.declined``: the card was declined (a charge, or a renewal's)."""

    event_type: ClassVar[str] = "payment.declined"


class PaymentFailedData(PaymentEventData):
    """``payment.failed``: 3-D Secure failed, or the challenge timed out.

    Attributes:
        reason: why, when the challenge timed out; absent when the buyer failed it.
    """

    event_type: ClassVar[str] = "payment.failed"
    reason: str | None = None


class PaymentVoidedData(PaymentEventData):
    """``payment.voided``: an authorization was released (the spec's own event).

    Attributes:
        reason: the void's reason (``None`` when the void gave none), or the expiry's.
    """

    event_type: ClassVar[str] = "payment.voided"
    reason: str | None


# --- refunds ---------------------------------------------------------------------------------


class RefundEventData(EventData):
    """What a refund's event carries.

    Attributes:
        payment_id: the refunded payment (``pay_…``).
        refund_id: the refund (``rfn_…``).
        amount: the refund's amount in kuruş.
        currency: ``TRY``.
    """

    payment_id: str = _id(IdPrefix.PAYMENT)
    refund_id: str = _id(IdPrefix.REFUND)
    amount: Kurus
    currency: str


class PaymentRefundedData(RefundEventData):
    """``payment.refunded``: a refund completed at once (answered 200)."""

    event_type: ClassVar[str] = "payment.refunded"


class RefundPendingData(RefundEventData):
    """``refund.pending``: a refund answered 202; the bank confirms it later."""

    event_type: ClassVar[str] = "refund.pending"


class RefundSettledData(RefundEventData):
    """``refund.settled``: the bank confirmed an in-flight refund."""

    event_type: ClassVar[str] = "refund.settled"


# --- checkout sessions -----------------------------------------------------------------------


class SessionExpiredData(EventData):
    """``session.expired``: a hosted checkout ran out of time unpaid.

    Attributes:
        session_id: the checkout session (a UUID).
        transaction_id: the session's ``transactionId``.
    """

    event_type: ClassVar[str] = "session.expired"
    session_id: str
    transaction_id: str


class SessionCompletedData(EventData):
    """``session.completed``: a hosted checkout was paid (or its card saved).

    Attributes:
        session_id: the checkout session (a UUID).
        transaction_id: the session's ``transactionId``.
        mode: ``payment``, ``qr`` or ``card_update_only``.
        payment_id: the payment that paid it; ``None`` for a card update.
    """

    event_type: ClassVar[str] = "session.completed"
    session_id: str
    transaction_id: str
    mode: str
    payment_id: str | None = _id(IdPrefix.PAYMENT)


# --- subscriptions ---------------------------------------------------------------------------


class SubscriptionEventData(EventData):
    """What every ``subscription.*`` event carries: the subscription after the change.

    Attributes:
        subscription_id: the subscription (``sub_…``).
        customer_id: its customer (``cus_…``).
        status: its status after the change.
        cycle_number: how many periods have been charged.
        amount_minor: the amount of each period, in kuruş.
        currency: ``TRY``.
        next_charge_at: when it is charged next; ``None`` when it will not be.
        cancel_at_period_end: whether it ends when the current period does.
    """

    subscription_id: str = _id(IdPrefix.SUBSCRIPTION)
    customer_id: str = _id(IdPrefix.CUSTOMER)
    status: str
    cycle_number: int
    amount_minor: Kurus
    currency: str
    next_charge_at: Moment | None
    cancel_at_period_end: bool


class SubscriptionCreatedData(SubscriptionEventData):
    """``subscription.created``."""

    event_type: ClassVar[str] = "subscription.created"


class SubscriptionRenewedData(SubscriptionEventData):
    """``subscription.renewed``: a period was charged.

    Attributes:
        payment_id: the payment that charged it.
        charge_kind: ``renewal``, ``trial_end``, ``retry``, ``charge_now`` or ``immediate``.
        generate_invoice: whether the merchant asked for an invoice each period.
    """

    event_type: ClassVar[str] = "subscription.renewed"
    payment_id: str = _id(IdPrefix.PAYMENT)
    charge_kind: str
    generate_invoice: bool


class SubscriptionRenewalFailedData(SubscriptionEventData):
    """``subscription.renewal_failed``: a period's charge was declined.

    Attributes:
        payment_id: the declined payment.
        charge_kind: as in `SubscriptionRenewedData`.
    """

    event_type: ClassVar[str] = "subscription.renewal_failed"
    payment_id: str = _id(IdPrefix.PAYMENT)
    charge_kind: str


class SubscriptionPastDueData(SubscriptionEventData):
    """``subscription.past_due``: the first failed charge; retries are scheduled.

    Attributes:
        retry_schedule: when the charge will be tried again.
    """

    event_type: ClassVar[str] = "subscription.past_due"
    retry_schedule: list[Moment]


class SubscriptionExpiredData(SubscriptionEventData):
    """``subscription.expired``: every retry failed.

    Attributes:
        reason: ``retries_exhausted``.
    """

    event_type: ClassVar[str] = "subscription.expired"
    reason: str


class SubscriptionPausedData(SubscriptionEventData):
    """``subscription.paused``."""

    event_type: ClassVar[str] = "subscription.paused"


class SubscriptionResumedData(SubscriptionEventData):
    """``subscription.resumed``."""

    event_type: ClassVar[str] = "subscription.resumed"


class SubscriptionCancelScheduledData(SubscriptionEventData):
    """``subscription.cancel_scheduled``: it ends when the current period does.

    Attributes:
        reason: the cancel's reason, if one was given.
    """

    event_type: ClassVar[str] = "subscription.cancel_scheduled"
    reason: str | None


class SubscriptionCancelledData(SubscriptionEventData):
    """``subscription.cancelled``: it ended (now, or at its period's end).

    Attributes:
        reason: the cancel's reason, if one was given; ``period_end`` for a scheduled one.
    """

    event_type: ClassVar[str] = "subscription.cancelled"
    reason: str | None


class SubscriptionCardUpdatedData(SubscriptionEventData):
    """``subscription.card_updated``: the buyer gave a new card on the portal.

    Attributes:
        card_last4: the new card's last four digits (never more of it).
        card_brand: the new card's brand.
    """

    event_type: ClassVar[str] = "subscription.card_updated"
    card_last4: str = Field(pattern=r"^[0-9]{4}$")
    card_brand: str


class SubscriptionTrialWillEndData(SubscriptionEventData):
    """``subscription.trial_will_end``: 3 days before a trial ends.

    Attributes:
        trial_end_at: when the trial ends (and the first charge is made).
    """

    event_type: ClassVar[str] = "subscription.trial_will_end"
    trial_end_at: Moment


# --- the table -------------------------------------------------------------------------------


@dataclass(frozen=True)
class EventType:
    """One event type the service sends.

    Attributes:
        name: the type, e.g. ``payment.captured``.
        sent_when: what makes the service send it.
        data: the model of its ``data``.
        example_fields: the fields of an example ``data`` (`example` builds it).
    """

    name: str
    sent_when: str
    data: type[EventData]
    example_fields: dict[str, Any]

    @property
    def example(self) -> EventData:
        """An example ``data``, as the sandbox sends it (validated when built)."""
        return self.data(**self.example_fields)


_PAY = {
    "payment_id": "pay_01a20cb3ec625f0148aad463",
    "transaction_id": "order-2026-0001",
    "amount": 15_000,
    "currency": "TRY",
}
_REFUND = {
    "payment_id": "pay_01a20cb3ec625f0148aad463",
    "refund_id": "rfn_01a20cb3f1a9e27d5b6c0e14",
    "amount": 15_000,
    "currency": "TRY",
}
_SESSION = {
    "session_id": "1964f726-7c72-41d4-8f5e-f09724ee84fb",
    "transaction_id": "order-2026-0002",
}
_NEXT = datetime(2026, 2, 1, 9, 0, tzinfo=UTC)
_SUB: dict[str, Any] = {
    "subscription_id": "sub_01a20cb3ef340da325cb56c3",
    "customer_id": "cus_demo_ayse",
    "status": "active",
    "cycle_number": 1,
    "amount_minor": 9_900,
    "currency": "TRY",
    "next_charge_at": _NEXT,
    "cancel_at_period_end": False,
}
_RENEWAL = {"payment_id": "pay_01a2a4c19b0e7d3f52c8e6a1", "charge_kind": "renewal"}


def _table(*found: EventType) -> dict[str, EventType]:
    table: dict[str, EventType] = {}
    for entry in found:
        if entry.data.event_type != entry.name:
            raise ValueError(f"{entry.name}: its data model is {entry.data.event_type}'s")
        table[entry.name] = entry
    return table


def _sub(**changes: Any) -> dict[str, Any]:
    return {**_SUB, **changes}


#: Every event type the sandbox sends, in the order the guide lists them.
EVENT_TYPES: dict[str, EventType] = _table(
    EventType(
        "payment.captured",
        "a charge is captured: at once, by a capture, a passed 3-D Secure challenge, a TR QR "
        "payment or a renewal",
        PaymentCapturedData,
        dict(**_PAY, status="captured"),
    ),
    EventType(
        "payment.authorized",
        "a preauthorization (`capture=False`) is approved",
        PaymentAuthorizedData,
        dict(**_PAY, status="authorized"),
    ),
    EventType(
        "payment.3ds_pending",
        "a charge waits for the buyer's 3-D Secure challenge",
        PaymentThreeDSPendingData,
        dict(**_PAY, status="pending_3ds"),
    ),
    EventType(
        "payment.declined",
        "the card was declined",
        PaymentDeclinedData,
        dict(**_PAY, status="declined"),
    ),
    EventType(
        "payment.failed",
        "3-D Secure failed, or the challenge was left to time out",
        PaymentFailedData,
        dict(**_PAY, status="failed", reason="3-D Secure challenge timed out"),
    ),
    EventType(
        "payment.voided",
        "an authorization was voided (`data.reason` is the void's reason) or expired",
        PaymentVoidedData,
        dict(**_PAY, status="voided", reason="customer changed their mind"),
    ),
    EventType(
        "payment.refunded",
        "a refund completed at once",
        PaymentRefundedData,
        dict(**_REFUND),
    ),
    EventType(
        "refund.pending",
        "a refund answered 202: the bank confirms it later",
        RefundPendingData,
        dict(**_REFUND),
    ),
    EventType(
        "refund.settled",
        "the bank confirmed an in-flight refund",
        RefundSettledData,
        dict(**_REFUND),
    ),
    EventType(
        "session.completed",
        "a hosted checkout was paid",
        SessionCompletedData,
        dict(**_SESSION, mode="payment", payment_id="pay_01a20cb3ec625f0148aad463"),
    ),
    EventType(
        "session.expired",
        "a hosted checkout ran out of time unpaid",
        SessionExpiredData,
        dict(**_SESSION),
    ),
    EventType(
        "subscription.created",
        "a subscription was created",
        SubscriptionCreatedData,
        dict(**_sub(cycle_number=1)),
    ),
    EventType(
        "subscription.renewed",
        "a period was charged",
        SubscriptionRenewedData,
        dict(**_sub(cycle_number=2), **_RENEWAL, generate_invoice=False),
    ),
    EventType(
        "subscription.renewal_failed",
        "a period's charge was declined",
        SubscriptionRenewalFailedData,
        dict(**_sub(status="past_due"), **_RENEWAL),
    ),
    EventType(
        "subscription.past_due",
        "the first failed charge: retries are scheduled",
        SubscriptionPastDueData,
        dict(
            **_sub(status="past_due", next_charge_at=datetime(2026, 2, 2, 9, 0, tzinfo=UTC)),
            retry_schedule=[datetime(2026, 2, day, 9, 0, tzinfo=UTC) for day in (2, 4, 6)],
        ),
    ),
    EventType(
        "subscription.expired",
        "every retry failed",
        SubscriptionExpiredData,
        dict(**_sub(status="expired", next_charge_at=None), reason="retries_exhausted"),
    ),
    EventType(
        "subscription.trial_will_end",
        "3 days before a trial ends",
        SubscriptionTrialWillEndData,
        dict(**_sub(status="trialing", cycle_number=0), trial_end_at=_NEXT),
    ),
    EventType(
        "subscription.paused",
        "a subscription was paused",
        SubscriptionPausedData,
        dict(**_sub(status="paused", next_charge_at=None)),
    ),
    EventType(
        "subscription.resumed",
        "a paused subscription was resumed",
        SubscriptionResumedData,
        dict(**_SUB),
    ),
    EventType(
        "subscription.cancel_scheduled",
        "a cancel at the period's end was asked for",
        SubscriptionCancelScheduledData,
        dict(**_sub(cancel_at_period_end=True), reason="moving abroad"),
    ),
    EventType(
        "subscription.cancelled",
        "a subscription ended: cancelled now, or at its period's end",
        SubscriptionCancelledData,
        dict(**_sub(status="cancelled", next_charge_at=None), reason="moving abroad"),
    ),
    EventType(
        "subscription.card_updated",
        "the buyer gave a new card on the portal",
        SubscriptionCardUpdatedData,
        dict(**_SUB, card_last4="4242", card_brand="visa"),
    ),
)


def event_type(name: str) -> EventType:
    """The event type called ``name``.

    Raises:
        LookupError: no such event type; the message says where to add one.
    """
    try:
        return EVENT_TYPES[name]
    except KeyError:
        raise LookupError(
            f"{name!r} is not an event type of workbench.spec.events.EVENT_TYPES: add its "
            "data model and an EventType there before the sandbox sends it"
        ) from None
