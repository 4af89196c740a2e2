"""`WebhookListener`: a receiver that verifies, de-duplicates, forwards and records deliveries."""

from __future__ import annotations

import dataclasses
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Self

import httpx2

from workbench._transport import default_ssl_context
from workbench.signing import canonical_path
from workbench.webhooks._events import WebhookEvent
from workbench.webhooks._receiver import ReceivedRequest, WebhookReceiver
from workbench.webhooks._verify import (
    DEFAULT_TOLERANCE,
    SeenEventIds,
    SeenEvents,
    WebhookPayloadError,
    WebhookVerificationError,
    construct_event,
)

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["Delivery", "WebhookListener"]

#: The headers a forward carries over unchanged, so the merchant's handler can verify.
FORWARDED_HEADERS = ("content-type", "x-timestamp", "x-signature", "x-event-id", "x-event-type")


@dataclass(frozen=True, slots=True)
class Delivery:
    """What the listener made of one POST.

    Attributes:
        received_at: when it arrived (aware UTC).
        path: the path it was posted to.
        status: the HTTP status the listener answered.
        outcome: ``verified``, ``duplicate`` (an event already received; answered 2xx,
            not processed again), ``rejected`` (not verified), ``not-found`` (wrong
            path) or ``failed`` (the forward or the handler did not succeed).
        event: the verified event (``None`` when rejected).
        reason: why it was rejected or failed, in words (never a secret).
        forward_status: the status the ``forward_to`` URL answered (``None``: not
            forwarded or no answer).
        attempt: which delivery attempt of its event this was, from the sender's
            ``X-Event-Attempt`` header (not signed: for display only; ``None``: not sent).
    """

    received_at: datetime
    path: str
    status: int
    outcome: str
    event: WebhookEvent | None = None
    reason: str | None = None
    forward_status: int | None = None
    attempt: int | None = None


class WebhookListener(WebhookReceiver):
    """A local receiver, like ``stripe listen``: verifies each delivery with `construct_event`.

    Unverified deliveries are answered 401 (400 for a body that is no event) and never
    listed in `events`; a replay of an event already taken is answered 200 and not
    processed again. With ``forward_to``, each verified delivery is posted on with
    the same body and signature headers, and the listener answers what that URL
    answered, so the sender retries when the merchant's server fails.

    Args:
        secret: the store's webhook secret (the sandbox's fixtures list it).
        host: the address to listen on.
        port: the port; 0 picks a free one.
        path: the path events are posted to (the signature covers it).
        tolerance: seconds ``X-Timestamp`` may lie from this clock.
        forward_to: a URL to pass each verified delivery on to.
        on_delivery: called with each `Delivery` once it is answered.
        seen: where event ids are claimed (default: a new `SeenEventIds`).
    """

    def __init__(
        self,
        secret: str,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        path: str = "/webhooks",
        tolerance: int = DEFAULT_TOLERANCE,
        forward_to: str | None = None,
        on_delivery: Callable[[Delivery], None] | None = None,
        seen: SeenEvents | None = None,
    ) -> None:
        if not secret:
            raise ValueError("a webhook secret is needed to verify deliveries")
        super().__init__(self._receive, host=host, port=port, path=path)
        self._secret = secret
        self._tolerance = tolerance
        self._forward_to = forward_to
        self._on_delivery = on_delivery
        self._seen: SeenEvents = seen if seen is not None else SeenEventIds()
        self._http: httpx2.Client | None = None
        self.events: list[WebhookEvent] = []
        self.deliveries: list[Delivery] = []
        self.rejected = 0
        self._changed = threading.Condition()

    def __repr__(self) -> str:
        state = self.url if self._server else "stopped"
        return f"WebhookListener({state}, events={len(self.events)}, rejected={self.rejected})"

    def start(self) -> Self:
        """Start listening in a background thread; returns the listener."""
        if self._forward_to is not None and self._http is None:
            self._http = httpx2.Client(timeout=10.0, verify=default_ssl_context())
        return super().start()

    def stop(self) -> None:
        """Stop listening, free the port and close the forwarding connection."""
        super().stop()
        if self._http is not None:
            self._http.close()
            self._http = None

    def wait_for(
        self, type: str | None = None, *, count: int = 1, timeout: float = 10.0
    ) -> list[WebhookEvent]:
        """Block until ``count`` events (of ``type``, if given) have been verified.

        Raises:
            TimeoutError: fewer arrived in time.
        """
        deadline = time.monotonic() + timeout
        with self._changed:
            while True:
                found = [e for e in self.events if type is None or e.type == type]
                if len(found) >= count:
                    return found
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError(
                        f"{len(found)} of {count} {type or 'events'} arrived in {timeout:g} s"
                    )
                self._changed.wait(left)

    def wait_for_deliveries(self, count: int, *, timeout: float = 10.0) -> list[Delivery]:
        """Block until ``count`` deliveries (of any outcome) have been answered.

        Raises:
            TimeoutError: fewer arrived in time.
        """
        deadline = time.monotonic() + timeout
        with self._changed:
            while len(self.deliveries) < count:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError(
                        f"{len(self.deliveries)} of {count} deliveries arrived in {timeout:g} s"
                    )
                self._changed.wait(left)
            return list(self.deliveries)

    def to_frame(self) -> pd.DataFrame:
        """The verified events as a DataFrame: id, type, object, created_at, data."""
        import pandas as pd

        rows = [
            {
                "id": e.id,
                "type": e.type,
                "object": e.object_id,
                "created_at": e.created_at,
                "data": e.data,
            }
            for e in list(self.events)
        ]
        return pd.DataFrame(rows, columns=["id", "type", "object", "created_at", "data"])

    def clear(self) -> None:
        """Forget the events and deliveries received so far (not the claimed ids)."""
        with self._changed:
            self.events.clear()
            self.deliveries.clear()
            self.rejected = 0

    def _receive(self, request: ReceivedRequest) -> int:
        attempt = request.headers.get("x-event-attempt", "")
        delivery = self._judge(request)
        if attempt.isdigit() and len(attempt) < 6:
            delivery = dataclasses.replace(delivery, attempt=int(attempt))
        with self._changed:
            self.deliveries.append(delivery)
            if delivery.outcome == "rejected":
                self.rejected += 1
            elif delivery.outcome == "verified" and delivery.event is not None:
                self.events.append(delivery.event)
            self._changed.notify_all()
        if self._on_delivery is not None:
            self._on_delivery(delivery)
        return delivery.status

    def _judge(self, request: ReceivedRequest) -> Delivery:
        now = datetime.now(UTC)
        route = canonical_path(request.path)
        if route != canonical_path(self.path):
            return Delivery(now, route, 404, "not-found", reason=f"nothing listens on {route}")
        try:
            event = construct_event(
                request.body, request.headers, self._secret, path=route, tolerance=self._tolerance
            )
        except WebhookVerificationError as exc:
            status = 400 if isinstance(exc, WebhookPayloadError) else 401
            return Delivery(now, route, status, "rejected", reason=str(exc))
        if not self._seen.claim(event.id):
            return Delivery(now, route, 200, "duplicate", event, "already received")
        if self._forward_to is None:
            return Delivery(now, route, 200, "verified", event)
        forwarded, reason = self._forward(request)
        ok = forwarded is not None and 200 <= forwarded < 300
        if not ok:
            self._seen.release(event.id)  # the sender's retry must be forwarded again
        status = forwarded if forwarded is not None else 502
        return Delivery(
            now,
            route,
            status,
            "verified" if ok else "failed",
            event,
            reason,
            forward_status=forwarded,
        )

    def _forward(self, request: ReceivedRequest) -> tuple[int | None, str | None]:
        assert self._forward_to is not None
        assert self._http is not None
        headers = {k: v for k, v in request.headers.items() if k in FORWARDED_HEADERS}
        try:
            response = self._http.post(self._forward_to, content=request.body, headers=headers)
        except httpx2.HTTPError as exc:
            return None, f"forward failed: {type(exc).__name__}"
        if 200 <= response.status_code < 300:
            return response.status_code, None
        return response.status_code, f"forward answered {response.status_code}"
