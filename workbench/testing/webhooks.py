"""A local receiver of the sandbox's webhooks for a test, each delivery verified."""

from __future__ import annotations

from types import TracebackType
from typing import Self

from workbench._client import Client
from workbench.webhooks import Delivery, WebhookEvent, WebhookListener

__all__ = ["WebhookCollector"]

#: Reconciler passes `WebhookCollector.deliver` runs at most (each delivers the first
#: pending event of every object; an object's later events go in later passes).
MAX_DELIVERY_PASSES = 50


class WebhookCollector:
    """Receives the sandbox's webhooks on a local port and verifies each one.

    On entering, a `WebhookListener` is started with the store's webhook secret and
    the store's webhook URL is pointed at it; on leaving, the URL is removed and the
    listener stopped. Events recorded while it runs are delivered when the reconciler
    runs: `deliver` runs it now (or the clock moves, or the background reconciler runs).

    Args:
        client: a client of the merchant whose webhooks to collect.
    """

    def __init__(self, client: Client) -> None:
        self._client = client
        self._listener: WebhookListener | None = None

    def __repr__(self) -> str:
        return f"WebhookCollector({self._listener!r})"

    @property
    def listener(self) -> WebhookListener:
        """The running listener (`WebhookListener`)."""
        if self._listener is None:
            raise RuntimeError("the collector is not running: use it in a with block")
        return self._listener

    @property
    def url(self) -> str:
        """Where the sandbox posts the webhooks."""
        return self.listener.url

    @property
    def events(self) -> list[WebhookEvent]:
        """The verified events received so far, in order of arrival."""
        return list(self.listener.events)

    @property
    def deliveries(self) -> list[Delivery]:
        """Every delivery received so far, verified or not, in order of arrival."""
        return list(self.listener.deliveries)

    def start(self) -> Self:
        """Start the listener and point the store's webhooks at it."""
        secret = self._client.sandbox.fixtures().webhook_secret
        if not secret:
            raise RuntimeError("the sandbox's store has no webhook secret")
        self._listener = WebhookListener(secret).start()
        try:
            self._client.sandbox.set_webhook(self._listener.url)
        except BaseException:
            self._listener.stop()
            self._listener = None
            raise
        return self

    def stop(self) -> None:
        """Remove the store's webhook URL and stop the listener."""
        if self._listener is None:
            return
        try:
            self._client.sandbox.set_webhook(None)
        finally:
            self._listener.stop()
            self._listener = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()

    def deliver(self) -> list[WebhookEvent]:
        """Run the reconciler until no webhook is due now; return the events received.

        Each pass delivers the first pending event of every object, so passes run
        until one delivers nothing.
        """
        for _ in range(MAX_DELIVERY_PASSES):
            if not self._client.sandbox.tick().processed.get("webhooks", 0):
                break
        return self.events

    def wait_for(
        self, type: str | None = None, *, count: int = 1, timeout: float = 5.0
    ) -> list[WebhookEvent]:
        """Deliver what is due, then wait for ``count`` events (of ``type``, if given).

        Returns:
            The verified events of ``type`` (all events without one), at least ``count``.

        Raises:
            TimeoutError: fewer arrived within ``timeout`` seconds.
        """
        self.deliver()
        return self.listener.wait_for(type, count=count, timeout=timeout)

    def clear(self) -> None:
        """Forget the events and deliveries received so far."""
        self.listener.clear()
