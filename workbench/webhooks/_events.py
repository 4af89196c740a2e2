"""Events as `construct_event` returns them: one typed class per event type, a generic one else.

Each class's ``data`` is the event type's definition in `workbench.spec.events`, the one
the sandbox builds the event through and the OpenAPI document's ``webhooks`` section is
generated from, so ``event.data.amount`` is an ``int`` of kuruş and
``event.data.next_charge_at`` an aware UTC datetime. An event type this client does not
know comes back as a plain `WebhookEvent` (``data`` a dict), never an error: a newer
service may send one. Dispatch on the class::

    match construct_event(body, headers, secret, path="/webhooks"):
        case PaymentCaptured(data=data):
            orders[data.payment_id] = "paid"
        case SubscriptionPastDue(data=data):
            remind(data.customer_id, data.retry_schedule)
        case _:
            pass  # an event you do not handle: answer 2xx all the same
"""

from __future__ import annotations

from typing import Any, Generic, Literal, get_args

from pydantic import ConfigDict, Field, PrivateAttr
from typing_extensions import TypeVar

from workbench.models._base import APIObject, UtcDatetime
from workbench.spec.events import (
    PaymentAuthorizedData,
    PaymentCapturedData,
    PaymentDeclinedData,
    PaymentFailedData,
    PaymentRefundedData,
    PaymentThreeDSPendingData,
    PaymentVoidedData,
    RefundPendingData,
    RefundSettledData,
    SessionCompletedData,
    SessionExpiredData,
    SubscriptionCancelledData,
    SubscriptionCancelScheduledData,
    SubscriptionCardUpdatedData,
    SubscriptionCreatedData,
    SubscriptionExpiredData,
    SubscriptionPastDueData,
    SubscriptionPausedData,
    SubscriptionRenewalFailedData,
    SubscriptionRenewedData,
    SubscriptionResumedData,
    SubscriptionTrialWillEndData,
)

__all__ = [
    "EVENT_CLASSES",
    "PaymentAuthorized",
    "PaymentCaptured",
    "PaymentDeclined",
    "PaymentFailed",
    "PaymentRefunded",
    "PaymentThreeDSPending",
    "PaymentVoided",
    "RefundPending",
    "RefundSettled",
    "SessionCompleted",
    "SessionExpired",
    "SubscriptionCancelScheduled",
    "SubscriptionCancelled",
    "SubscriptionCardUpdated",
    "SubscriptionCreated",
    "SubscriptionExpired",
    "SubscriptionPastDue",
    "SubscriptionPaused",
    "SubscriptionRenewalFailed",
    "SubscriptionRenewed",
    "SubscriptionResumed",
    "SubscriptionTrialWillEnd",
    "WebhookEvent",
]

#: A typed event's ``data`` model; a bare `WebhookEvent`'s ``data`` is the JSON object.
DataT = TypeVar("DataT", default=dict[str, Any])

#: The ``data`` key holding the id of the object an event type is about (by its prefix).
_OBJECT_KEYS = {
    "payment": "paymentId",
    "refund": "refundId",
    "session": "sessionId",
    "subscription": "subscriptionId",
}


class WebhookEvent(APIObject, Generic[DataT]):
    """A verified event, as `construct_event` returns it.

    The base of the typed events (`PaymentCaptured`...), and itself the event of a type
    this client does not know, whose ``data`` is the JSON object as sent.

    Attributes:
        id: the event id (``evt_…``); the same on every delivery attempt of the event.
        type: the event type, e.g. ``payment.captured``.
        created_at: when the service created the event (aware UTC).
        merchant_id: the merchant the event belongs to.
        data: the event's object: a typed model for a known type (its fields typed,
            and readable by wire name too: ``data["paymentId"]``), else a dict.
    """

    model_config = ConfigDict(defer_build=True)  # each type built when first received

    id: str
    type: str
    created_at: UtcDatetime
    merchant_id: str | None = None
    data: DataT = Field(default_factory=dict)  # type: ignore[assignment]
    _raw: bytes = PrivateAttr(default=b"")

    @property
    def object_id(self) -> str | None:
        """The id of the object the event is about: ``paymentId`` of a ``payment.*`` event,
        ``refundId`` of ``refund.*``, ``sessionId`` of ``session.*``, ``subscriptionId`` of
        ``subscription.*`` (``None`` if absent)."""
        key = _OBJECT_KEYS.get(self.type.split(".", 1)[0])
        data: Any = self.data
        value = data.get(key) if key and hasattr(data, "get") else None
        return value if isinstance(value, str) else None

    @property
    def raw(self) -> bytes:
        """The exact bytes that were verified."""
        return self._raw


class PaymentCaptured(WebhookEvent[PaymentCapturedData]):
    """``payment.captured``: money moved (a charge, a capture, 3-D Secure, TR QR, a renewal)."""

    type: Literal["payment.captured"]


class PaymentAuthorized(WebhookEvent[PaymentAuthorizedData]):
    """``payment.authorized``: a preauthorization was approved; capture or void it."""

    type: Literal["payment.authorized"]


class PaymentThreeDSPending(WebhookEvent[PaymentThreeDSPendingData]):
    """``payment.3ds_pending``: the charge waits for the buyer's 3-D Secure challenge."""

    type: Literal["payment.3ds_pending"]


class PaymentDeclined(WebhookEvent[PaymentDeclinedData]):
    """``payment.declined``: the card was declined."""

    type: Literal["payment.declined"]


class PaymentFailed(WebhookEvent[PaymentFailedData]):
    """``payment.failed``: 3-D Secure failed or timed out (``data.reason``)."""

    type: Literal["payment.failed"]


class PaymentVoided(WebhookEvent[PaymentVoidedData]):
    """``payment.voided``: an authorization was released (``data.reason``)."""

    type: Literal["payment.voided"]


class PaymentRefunded(WebhookEvent[PaymentRefundedData]):
    """``payment.refunded``: a refund completed at once."""

    type: Literal["payment.refunded"]


class RefundPending(WebhookEvent[RefundPendingData]):
    """``refund.pending``: a refund is in flight; ``refund.settled`` follows."""

    type: Literal["refund.pending"]


class RefundSettled(WebhookEvent[RefundSettledData]):
    """``refund.settled``: the bank confirmed an in-flight refund."""

    type: Literal["refund.settled"]


class SessionCompleted(WebhookEvent[SessionCompletedData]):
    """``session.completed``: a hosted checkout was paid."""

    type: Literal["session.completed"]


class SessionExpired(WebhookEvent[SessionExpiredData]):
    """``session.expired``: a hosted checkout ran out of time unpaid."""

    type: Literal["session.expired"]


class SubscriptionCreated(WebhookEvent[SubscriptionCreatedData]):
    """``subscription.created``."""

    type: Literal["subscription.created"]


class SubscriptionRenewed(WebhookEvent[SubscriptionRenewedData]):
    """``subscription.renewed``: a period was charged (``data.payment_id``)."""

    type: Literal["subscription.renewed"]


class SubscriptionRenewalFailed(WebhookEvent[SubscriptionRenewalFailedData]):
    """``subscription.renewal_failed``: a period's charge was declined."""

    type: Literal["subscription.renewal_failed"]


class SubscriptionPastDue(WebhookEvent[SubscriptionPastDueData]):
    """``subscription.past_due``: retries are scheduled (``data.retry_schedule``)."""

    type: Literal["subscription.past_due"]


class SubscriptionExpired(WebhookEvent[SubscriptionExpiredData]):
    """``subscription.expired``: every retry failed."""

    type: Literal["subscription.expired"]


class SubscriptionTrialWillEnd(WebhookEvent[SubscriptionTrialWillEndData]):
    """``subscription.trial_will_end``: 3 days before a trial ends (``data.trial_end_at``)."""

    type: Literal["subscription.trial_will_end"]


class SubscriptionPaused(WebhookEvent[SubscriptionPausedData]):
    """``subscription.paused``."""

    type: Literal["subscription.paused"]


class SubscriptionResumed(WebhookEvent[SubscriptionResumedData]):
    """``subscription.resumed``."""

    type: Literal["subscription.resumed"]


class SubscriptionCancelScheduled(WebhookEvent[SubscriptionCancelScheduledData]):
    """``subscription.cancel_scheduled``: it ends when the current period does."""

    type: Literal["subscription.cancel_scheduled"]


class SubscriptionCancelled(WebhookEvent[SubscriptionCancelledData]):
    """``subscription.cancelled``: it ended (``data.reason``)."""

    type: Literal["subscription.cancelled"]


class SubscriptionCardUpdated(WebhookEvent[SubscriptionCardUpdatedData]):
    """``subscription.card_updated``: the buyer gave a new card (``data.card_last4``)."""

    type: Literal["subscription.card_updated"]


def _by_type(*classes: type[WebhookEvent[Any]]) -> dict[str, type[WebhookEvent[Any]]]:
    return {get_args(cls.model_fields["type"].annotation)[0]: cls for cls in classes}


#: The typed class of each event type this client knows.
EVENT_CLASSES: dict[str, type[WebhookEvent[Any]]] = _by_type(
    PaymentCaptured,
    PaymentAuthorized,
    PaymentThreeDSPending,
    PaymentDeclined,
    PaymentFailed,
    PaymentVoided,
    PaymentRefunded,
    RefundPending,
    RefundSettled,
    SessionCompleted,
    SessionExpired,
    SubscriptionCreated,
    SubscriptionRenewed,
    SubscriptionRenewalFailed,
    SubscriptionPastDue,
    SubscriptionExpired,
    SubscriptionTrialWillEnd,
    SubscriptionPaused,
    SubscriptionResumed,
    SubscriptionCancelScheduled,
    SubscriptionCancelled,
    SubscriptionCardUpdated,
)
