"""Verify one webhook delivery: `construct_event`, its errors, and a store of seen event ids."""

from __future__ import annotations

import json
import logging
import threading
from collections import OrderedDict
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any, Protocol

from pydantic import ValidationError

from workbench.signing import (
    SignatureMismatch,
    TimestampInvalid,
    canonical_path,
    parse_timestamp,
    verify,
)
from workbench.spec.limits import TIMESTAMP_SKEW_SECONDS
from workbench.webhooks._events import EVENT_CLASSES, WebhookEvent

__all__ = [
    "DEFAULT_TOLERANCE",
    "SeenEventIds",
    "SeenEvents",
    "WebhookPayloadError",
    "WebhookReplayError",
    "WebhookSignatureError",
    "WebhookTimestampError",
    "WebhookVerificationError",
    "construct_event",
    "parse_event",
]

log = logging.getLogger("workbench.webhooks")

#: Seconds a delivery's ``X-Timestamp`` may lie from the receiver's clock, either way.
DEFAULT_TOLERANCE = TIMESTAMP_SKEW_SECONDS


class WebhookVerificationError(ValueError):
    """Base class: the delivery is not to be trusted or not to be processed.

    The message never contains the secret, the signature or the body.
    """


class WebhookSignatureError(WebhookVerificationError):
    """``X-Signature`` is missing or does not match the body, path and timestamp."""


class WebhookTimestampError(WebhookVerificationError):
    """``X-Timestamp`` is missing, malformed, or outside the tolerance.

    Attributes:
        reason: ``missing``, ``malformed``, ``offset``, ``stale`` (too old) or
            ``future`` (too far ahead).
    """

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason


class WebhookPayloadError(WebhookVerificationError):
    """The signed body is not an event (not JSON, not an object, fields missing)."""


class WebhookReplayError(WebhookVerificationError):
    """The event was already claimed by an earlier delivery: do not process it again.

    Answer a replay with 2xx: the sender stops retrying an event you already have.

    Attributes:
        event_id: the id of the replayed event.
    """

    def __init__(self, event_id: str) -> None:
        super().__init__(f"event {event_id} was already received")
        self.event_id = event_id


class SeenEvents(Protocol):
    """Where a receiver records the event ids it has taken on.

    Back it with your database in production (a table with a unique event id:
    ``INSERT … ON CONFLICT DO NOTHING`` and look at the row count), so a replay is
    caught across processes and restarts.
    """

    def claim(self, event_id: str) -> bool:
        """Record ``event_id``; ``False`` if it was recorded already (atomically)."""
        ...

    def release(self, event_id: str) -> None:
        """Forget ``event_id`` (processing failed, so the sender's retry must be processed)."""
        ...


class SeenEventIds:
    """An in-memory, thread-safe `SeenEvents` keeping the most recent ``max_size`` ids.

    Args:
        max_size: how many ids to remember; the oldest are forgotten first.
    """

    def __init__(self, max_size: int = 10_000) -> None:
        if max_size < 1:
            raise ValueError("max_size must be at least 1")
        self._max_size = max_size
        self._ids: OrderedDict[str, None] = OrderedDict()
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"SeenEventIds({len(self)} ids, max_size={self._max_size})"

    def __len__(self) -> int:
        return len(self._ids)

    def __contains__(self, event_id: object) -> bool:
        return event_id in self._ids

    def claim(self, event_id: str) -> bool:
        """Record ``event_id``; ``False`` if it was recorded already."""
        with self._lock:
            if event_id in self._ids:
                return False
            self._ids[event_id] = None
            while len(self._ids) > self._max_size:
                self._ids.popitem(last=False)
            return True

    def release(self, event_id: str) -> None:
        """Forget ``event_id``."""
        with self._lock:
            self._ids.pop(event_id, None)


def _lowered(headers: Mapping[str, str]) -> dict[str, str]:
    return {str(k).lower(): str(v) for k, v in headers.items()}


def _check_time(text: str | None, now: datetime, tolerance: int) -> None:
    """Map the signing module's timestamp failure to a stale / future / malformed reason."""
    try:
        moment = parse_timestamp(text)
    except TimestampInvalid as exc:
        raise WebhookTimestampError(exc.reason, str(exc)) from None
    age = (now - moment).total_seconds()
    if age > tolerance:
        raise WebhookTimestampError(
            "stale", f"X-Timestamp is {int(age)} s old, more than the {tolerance} s tolerance"
        )
    if -age > tolerance:
        raise WebhookTimestampError(
            "future",
            f"X-Timestamp is {int(-age)} s ahead of this clock, more than the {tolerance} s "
            "tolerance",
        )


def construct_event(
    payload: bytes | str,
    headers: Mapping[str, str],
    secret: str,
    *,
    path: str,
    tolerance: int = DEFAULT_TOLERANCE,
    seen: SeenEvents | None = None,
    now: datetime | None = None,
) -> WebhookEvent:
    """Verify a webhook delivery and return its event, like Stripe's ``Webhook.construct_event``.

    The service signs a delivery with the request-signing scheme of `workbench.signing`
    under the store's webhook secret: ``X-Signature`` is the HMAC-SHA256 of
    ``X-Timestamp``, ``POST``, the path the delivery was posted to and the SHA-256 of
    the body. Pass the *raw* body bytes, before any JSON parsing.

    Args:
        payload: the raw request body, exactly as received.
        headers: the request headers (any mapping; names are matched case-insensitively).
        secret: the store's webhook secret (``whsec_…``).
        path: the path the delivery was posted to (a full URL works too; the query
            string is ignored), e.g. ``request.url.path``.
        tolerance: seconds ``X-Timestamp`` may lie from ``now``, either way.
        seen: a `SeenEvents` store; when given, an event id it already holds raises
            `WebhookReplayError`, and a new one is claimed in it. Release it if your
            processing fails, so the sender's retry is processed.
        now: the receiver's current time (default: the wall clock, aware UTC).

    Returns:
        The verified event: an instance of its type's class (`PaymentCaptured`,
        `SubscriptionRenewed`... of `EVENT_CLASSES`) with ``data`` typed, or a plain
        `WebhookEvent` (``data`` a dict) for a type this client does not know.

    Raises:
        WebhookTimestampError: ``X-Timestamp`` is missing, malformed, too old
            (``reason="stale"``) or too far ahead (``reason="future"``).
        WebhookSignatureError: ``X-Signature`` is missing or does not match.
        WebhookPayloadError: the signed body is not an event (or its ``data`` is not
            what its known type carries), or ``X-Event-Id`` disagrees with it.
        WebhookReplayError: ``seen`` holds the event's id already.
        ValueError: ``secret`` is empty.

    Example:
        ```python
        event = construct_event(
            request.body, request.headers, WEBHOOK_SECRET, path="/webhooks", seen=seen_ids
        )
        ```
    """
    if not secret:
        raise ValueError("a webhook secret is needed to verify deliveries")
    body = payload.encode("utf-8") if isinstance(payload, str) else bytes(payload)
    given = _lowered(headers)
    timestamp = given.get("x-timestamp")
    current = now if now is not None else datetime.now(UTC)
    _check_time(timestamp, current, tolerance)
    if not given.get("x-signature"):
        raise WebhookSignatureError("X-Signature header is missing")
    try:
        verify(
            secret,
            signature=given.get("x-signature"),
            timestamp=timestamp,
            method="POST",
            path=canonical_path(path),
            body=body,
            now=current,
            skew_seconds=tolerance,
        )
    except SignatureMismatch:
        raise WebhookSignatureError(
            "X-Signature does not match this body, path and timestamp under the webhook secret"
        ) from None
    except TimestampInvalid as exc:  # already checked above; kept for safety
        raise WebhookTimestampError(exc.reason, str(exc)) from None
    event = parse_event(body)
    header_id = given.get("x-event-id")
    if header_id is not None and header_id != event.id:
        raise WebhookPayloadError("X-Event-Id does not match the signed event's id")
    if seen is not None and not seen.claim(event.id):
        raise WebhookReplayError(event.id)
    return event


def parse_event(body: bytes | str) -> WebhookEvent[Any]:
    """The event in a delivery's body, typed by its ``type``, *without* verifying it.

    For a body already verified (a queue your route filled after `construct_event`),
    or a test's own event. Never for a body straight off the network.

    Args:
        body: the event's JSON.

    Returns:
        An instance of the type's class of `EVENT_CLASSES`; a plain `WebhookEvent`
        (``data`` the JSON object) for a type this client does not know, or for a known
        type whose ``data`` its definition refuses (logged as a warning on the
        ``workbench.webhooks`` logger, naming the fields and never their values).

    Raises:
        WebhookPayloadError: the body is not an event (not JSON, not an object, or the
            envelope's ``id``, ``type`` or ``createdAt`` missing or malformed).
    """
    raw = body.encode("utf-8") if isinstance(body, str) else bytes(body)
    try:
        decoded = json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise WebhookPayloadError("the body is not JSON") from None
    if not isinstance(decoded, dict):
        raise WebhookPayloadError("the body is not a JSON object")
    name = decoded.get("type")
    known = EVENT_CLASSES.get(name) if isinstance(name, str) else None
    event: WebhookEvent[Any] | None = None
    if known is not None:
        try:
            event = known.model_validate(decoded)
        except ValidationError as exc:
            log.warning(
                "a %s event whose data its definition refuses (%s): returned untyped",
                name,
                ", ".join(_fields(exc)),
            )
    if event is None:
        try:
            event = WebhookEvent.model_validate(decoded)
        except ValidationError as exc:
            raise WebhookPayloadError(
                f"the body is not an event: check {', '.join(_fields(exc))}"
            ) from None
    event._raw = raw
    return event


def _fields(exc: ValidationError) -> list[str]:
    return sorted({".".join(str(p) for p in e["loc"]) for e in exc.errors()})
