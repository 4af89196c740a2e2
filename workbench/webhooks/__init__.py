"""Receive the service's webhooks: verify each delivery, reject replays, listen locally.

The service signs each delivery with the request-signing scheme of
`workbench.signing`, under the store's *webhook secret*: ``X-Timestamp`` and
``X-Signature`` over the timestamp, ``POST``, the receiver's path and the
SHA-256 of the raw body. `construct_event` checks exactly that over the raw
bytes received, before parsing them, and returns the event typed by its type
(`PaymentCaptured`, `SubscriptionRenewed`...; a plain `WebhookEvent` for a type this
client does not know).
`WebhookListener` is a local receiver built on it (``workbench listen`` runs one).

Example:
    ```python
    seen = SeenEventIds()
    event = construct_event(body, headers, WEBHOOK_SECRET, path="/webhooks", seen=seen)
    ```
"""

from workbench.webhooks._events import (
    EVENT_CLASSES,
    PaymentAuthorized,
    PaymentCaptured,
    PaymentDeclined,
    PaymentFailed,
    PaymentRefunded,
    PaymentThreeDSPending,
    PaymentVoided,
    RefundPending,
    RefundSettled,
    SessionCompleted,
    SessionExpired,
    SubscriptionCancelled,
    SubscriptionCancelScheduled,
    SubscriptionCardUpdated,
    SubscriptionCreated,
    SubscriptionExpired,
    SubscriptionPastDue,
    SubscriptionPaused,
    SubscriptionRenewalFailed,
    SubscriptionRenewed,
    SubscriptionResumed,
    SubscriptionTrialWillEnd,
    WebhookEvent,
)
from workbench.webhooks._listener import Delivery, WebhookListener
from workbench.webhooks._receiver import ReceivedRequest, WebhookReceiver
from workbench.webhooks._verify import (
    DEFAULT_TOLERANCE,
    SeenEventIds,
    SeenEvents,
    WebhookPayloadError,
    WebhookReplayError,
    WebhookSignatureError,
    WebhookTimestampError,
    WebhookVerificationError,
    construct_event,
    parse_event,
)

__all__ = [
    "DEFAULT_TOLERANCE",
    "EVENT_CLASSES",
    "Delivery",
    "PaymentAuthorized",
    "PaymentCaptured",
    "PaymentDeclined",
    "PaymentFailed",
    "PaymentRefunded",
    "PaymentThreeDSPending",
    "PaymentVoided",
    "ReceivedRequest",
    "RefundPending",
    "RefundSettled",
    "SeenEventIds",
    "SeenEvents",
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
    "WebhookListener",
    "WebhookPayloadError",
    "WebhookReceiver",
    "WebhookReplayError",
    "WebhookSignatureError",
    "WebhookTimestampError",
    "WebhookVerificationError",
    "construct_event",
    "parse_event",
]
