"""A local webhook receiver, like ``stripe listen``: start it, pass its URL as ``callbackUrl``.

The sandbox signs each delivery with the request-signing scheme of
`workbench.signing`, under the store's *webhook secret*: ``X-Timestamp`` and
``X-Signature`` over the timestamp, ``POST``, the receiver's path and the
SHA-256 of the raw body. `WebhookListener` checks exactly that over the raw
bytes it received, before parsing them, and answers 401 to anything that does
not verify (so the sandbox retries it and it is never listed as an event).

Example:
    >>> with WebhookListener(secret="whsec_test_wb_demo_0001") as hooks:  # doctest: +SKIP
    ...     client.sessions.create(..., callback_url=hooks.url)
    ...     hooks.wait_for("payment.voided")
"""

from __future__ import annotations

import json
import logging
import threading
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import TYPE_CHECKING, Any

from workbench.signing import SigningError, verify
from workbench.spec.limits import MAX_BODY_BYTES

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["WebhookEvent", "WebhookListener"]

log = logging.getLogger("workbench.webhooks")


@dataclass(frozen=True, slots=True)
class WebhookEvent:
    """One verified delivery.

    Attributes:
        id: the event id (``evt_…``).
        type: the event type (``payment.voided`` …).
        created_at: when the service created the event (as sent).
        data: the event's ``data`` object.
        received_at: when the listener received it (aware UTC).
        payload: the whole decoded body.
        raw: the exact bytes received.
    """

    id: str
    type: str
    created_at: str | None
    data: dict[str, Any]
    received_at: datetime
    payload: dict[str, Any] = field(repr=False)
    raw: bytes = field(repr=False)


class WebhookListener:
    """A threaded HTTP receiver on 127.0.0.1 that keeps the events it could verify.

    Args:
        secret: the store's webhook secret (the sandbox's fixtures list it).
        host: the address to listen on.
        port: the port; 0 picks a free one.
        path: the path events are posted to.
    """

    def __init__(
        self,
        secret: str,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        path: str = "/webhooks",
    ) -> None:
        if not secret:
            raise ValueError("a webhook secret is needed to verify deliveries")
        self._secret = secret
        self._host = host
        self._port = port
        self.path = path
        self.events: list[WebhookEvent] = []
        self.rejected = 0
        self._changed = threading.Condition()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    def __repr__(self) -> str:
        state = self.url if self._server else "stopped"
        return f"WebhookListener({state}, events={len(self.events)}, rejected={self.rejected})"

    @property
    def url(self) -> str:
        """The address to give the service as ``callbackUrl``.

        Raises:
            RuntimeError: the listener is not running.
        """
        if self._server is None:
            raise RuntimeError("the listener is not running: call start()")
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}{self.path}"

    def start(self) -> WebhookListener:
        """Start listening in a background thread; returns the listener."""
        if self._server is not None:
            return self
        server = ThreadingHTTPServer((self._host, self._port), self._handler_class())
        server.daemon_threads = True
        self._server = server
        self._thread = threading.Thread(
            target=server.serve_forever,
            kwargs={"poll_interval": 0.05},
            name="workbench-webhooks",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop listening and free the port."""
        if self._server is None:
            return
        self._server.shutdown()
        self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._server = None
        self._thread = None

    def __enter__(self) -> WebhookListener:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def wait_for(
        self, type: str | None = None, *, count: int = 1, timeout: float = 10.0
    ) -> list[WebhookEvent]:
        """Block until ``count`` events (of ``type``, if given) have arrived.

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

    def to_frame(self) -> pd.DataFrame:
        """The received events as a DataFrame: id, type, created_at, received_at, data."""
        import pandas as pd

        rows = [
            {
                "id": e.id,
                "type": e.type,
                "created_at": e.created_at,
                "received_at": e.received_at,
                "data": e.data,
            }
            for e in list(self.events)
        ]
        return pd.DataFrame(rows, columns=["id", "type", "created_at", "received_at", "data"])

    def clear(self) -> None:
        """Forget the events received so far."""
        with self._changed:
            self.events.clear()
            self.rejected = 0

    def _accept(self, path: str, headers: dict[str, str], raw: bytes) -> int:
        """Verify and keep one delivery; returns the HTTP status to answer."""
        route = path.split("?", 1)[0]
        if route.rstrip("/") != self.path.rstrip("/"):
            return 404
        try:
            verify(
                self._secret,
                signature=headers.get("x-signature"),
                timestamp=headers.get("x-timestamp"),
                method="POST",
                path=route,
                body=raw,
            )
            payload = json.loads(raw)
            if not isinstance(payload, dict):
                raise ValueError("not a JSON object")
        except (SigningError, ValueError) as exc:
            with self._changed:
                self.rejected += 1
            log.warning("rejected a webhook delivery: %s", type(exc).__name__)
            return 401 if isinstance(exc, SigningError) else 400
        data = payload.get("data")
        event = WebhookEvent(
            id=str(payload.get("id") or headers.get("x-event-id") or ""),
            type=str(payload.get("type") or headers.get("x-event-type") or ""),
            created_at=payload.get("createdAt"),
            data=data if isinstance(data, dict) else {},
            received_at=datetime.now(UTC),
            payload=payload,
            raw=raw,
        )
        with self._changed:
            if all(e.id != event.id for e in self.events) or not event.id:
                self.events.append(event)
            self._changed.notify_all()
        log.debug("webhook %s %s verified", event.type, event.id)
        return 200

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        listener = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                if length > MAX_BODY_BYTES:
                    self._answer(413)
                    return
                raw = self.rfile.read(length)
                headers = {k.lower(): v for k, v in self.headers.items()}
                self._answer(listener._accept(self.path, headers, raw))

            def _answer(self, status: int) -> None:
                body = b'{"received":true}' if status == 200 else b'{"received":false}'
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: Any) -> None:
                log.debug("webhook listener: " + format, *args)

        return Handler
