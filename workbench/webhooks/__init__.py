"""Receive the service's webhooks: verify each delivery, reject replays, listen locally.

The service signs each delivery with the request-signing scheme of
`workbench.signing`, under the store's *webhook secret*: ``X-Timestamp`` and
``X-Signature`` over the timestamp, ``POST``, the receiver's path and the
SHA-256 of the raw body. `construct_event` checks exactly that over the raw
bytes received, before parsing them, and returns a typed `WebhookEvent`.
`WebhookListener` is a local receiver built on it (``workbench listen`` runs one).

Example:
    ```python
    seen = SeenEventIds()
    event = construct_event(body, headers, WEBHOOK_SECRET, path="/webhooks", seen=seen)
    ```
"""

from workbench.webhooks._listener import Delivery, WebhookListener
from workbench.webhooks._receiver import ReceivedRequest, WebhookReceiver
from workbench.webhooks._verify import (
    DEFAULT_TOLERANCE,
    SeenEventIds,
    SeenEvents,
    WebhookEvent,
    WebhookPayloadError,
    WebhookReplayError,
    WebhookSignatureError,
    WebhookTimestampError,
    WebhookVerificationError,
    construct_event,
)

__all__ = [
    "DEFAULT_TOLERANCE",
    "Delivery",
    "ReceivedRequest",
    "SeenEventIds",
    "SeenEvents",
    "WebhookEvent",
    "WebhookListener",
    "WebhookPayloadError",
    "WebhookReceiver",
    "WebhookReplayError",
    "WebhookSignatureError",
    "WebhookTimestampError",
    "WebhookVerificationError",
    "construct_event",
]
