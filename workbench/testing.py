"""Test your own integration offline: a sandbox on a free port and helpers to drive it.

Installed with the ``testing`` extra (``pip install '.[testing]'`` from a checkout), the
pytest plugin (`workbench.pytest_plugin`) gives a test suite these as fixtures with no
set-up at all; the helpers here also work without pytest:

- `running_sandbox`: a sandbox on a free 127.0.0.1 port for a ``with`` block;
- `SandboxClock`: moves the sandbox's business clock (renewals, refund settlement,
  3-D Secure timeouts and webhook retries fall due as it moves);
- `FailNext`: makes the merchant's next request fail (``429``, ``500``, ``timeout``);
- `WebhookCollector`: a local receiver the sandbox's webhooks are pointed at, each
  delivery verified with the store's webhook secret.

Example:
    >>> with running_sandbox() as server, client_for(server) as client:  # doctest: +SKIP
    ...     client.payments.charge_card(
    ...         transaction_id="o-1", amount=2_500, card_token="tok_test_success"
    ...     )
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, Self

from workbench._client import Client
from workbench._extras import require
from workbench.config import DEFAULT_API_KEY, DEFAULT_SECRET_KEY
from workbench.resources.sandbox import FailureMode
from workbench.webhooks import Delivery, WebhookEvent, WebhookListener

if TYPE_CHECKING:
    from workbench.sandbox import SandboxServer

__all__ = [
    "FailNext",
    "SandboxClock",
    "WebhookCollector",
    "client_for",
    "running_sandbox",
]

#: Reconciler passes `WebhookCollector.deliver` runs at most (each delivers the first
#: pending event of every object; an object's later events go in later passes).
MAX_DELIVERY_PASSES = 50


@contextmanager
def running_sandbox(*, db_dir: Path | None = None, **config: Any) -> Iterator[SandboxServer]:
    """Start a sandbox on a free 127.0.0.1 port and stop it when the block ends.

    Its database is a new SQLite file in ``db_dir`` if given, else an in-memory SQLite
    database, unless ``db_url`` is given; the demo merchant uses the client's default
    keys unless ``api_key`` / ``secret_key`` are given. The reconciler runs in the
    background unless ``run_reconciler_in_background=False`` is passed.

    Args:
        db_dir: the folder of the SQLite database.
        **config: `workbench.sandbox.SandboxConfig` fields, e.g. ``latency_ms=50``.

    Raises:
        MissingExtraError: the ``[sandbox]`` extra is not installed.
    """
    require("workbench.testing.running_sandbox", "sandbox")
    from workbench.sandbox import SandboxConfig, SandboxServer

    config.setdefault("api_key", DEFAULT_API_KEY)
    config.setdefault("secret_key", DEFAULT_SECRET_KEY)
    config.setdefault(
        "db_url", "sqlite://" if db_dir is None else f"sqlite:///{db_dir / 'sandbox.db'}"
    )
    with SandboxServer(SandboxConfig(**config)) as server:
        yield server


def client_for(server: SandboxServer, **options: Any) -> Client:
    """A `Client` signed with the keys of ``server``'s demo merchant, pointed at it.

    Args:
        server: a running sandbox.
        **options: further `Client` arguments (``max_retries``, ``timeout``...).
    """
    config = server.config
    return Client(config.api_key, config.secret_key, server.base_url, **options)


#: The furthest the sandbox moves its clock in one call (400 days).
_MAX_ADVANCE = 400 * 24 * 3600


class SandboxClock:
    """The sandbox's business clock for one merchant (the client's).

    Moving it runs the work that falls due on the way, in order: renewals, refund
    settlement, 3-D Secure timeouts, webhook retries.

    Args:
        client: a client of the merchant whose clock this is.
    """

    def __init__(self, client: Client) -> None:
        self._client = client

    def __repr__(self) -> str:
        return f"SandboxClock({self._client.base_url})"

    def advance(
        self, *, days: int = 0, hours: int = 0, minutes: int = 0, seconds: int = 0
    ) -> datetime:
        """Move the clock forward and return the business time reached (aware UTC).

        The sandbox moves at most 400 days a call; a longer move is made in such steps.

        Raises:
            ValueError: the total is negative or not a whole number of seconds.
        """
        step = timedelta(days=days, hours=hours, minutes=minutes, seconds=seconds)
        total = step.total_seconds()
        if total < 0 or total != int(total):
            raise ValueError("the clock moves forward by whole seconds only")
        left = int(total)
        while True:
            now = self._client.sandbox.advance_clock(min(left, _MAX_ADVANCE)).business_time
            left -= min(left, _MAX_ADVANCE)
            if left == 0:
                return now


class FailNext:
    """Makes the merchant's next request fail once, as a real service sometimes does.

    Call it with ``"429"``, ``"500"`` or ``"timeout"`` (``seconds``: how long the
    timeout holds the request). The client's retries then meet the failure.

    Args:
        client: a client of the merchant whose next request fails.
    """

    def __init__(self, client: Client) -> None:
        self._client = client

    def __repr__(self) -> str:
        return f"FailNext({self._client.base_url})"

    def __call__(self, mode: FailureMode, *, seconds: int | None = None) -> str:
        """Arm the failure; returns the mode the sandbox armed."""
        return self._client.sandbox.fail_next(mode, seconds=seconds).fail_next


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
