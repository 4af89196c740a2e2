"""``workbench listen``: receive webhooks on a local port, verify each, print and log it.

Against a local sandbox, a delivery that is not its event's first attempt is followed by
the earlier attempts the sandbox made (time, status or error), read from its signed
``GET /sandbox/events/{id}/deliveries`` on a thread of their own: the delivery is
answered without waiting for them.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from types import FrameType
from typing import IO, TYPE_CHECKING, Any

import click

from workbench.config import Environment, Settings, mask_secret
from workbench.webhooks import DEFAULT_TOLERANCE, Delivery, WebhookListener

if TYPE_CHECKING:
    from workbench._client import Client
    from workbench.models import DeliveryAttempt

__all__ = ["ENV_WEBHOOK_SECRET", "attempt_line", "delivery_line", "delivery_record", "listen"]

#: Where the command reads the webhook secret when ``--secret`` is not given.
ENV_WEBHOOK_SECRET = "WORKBENCH_WEBHOOK_SECRET"


def delivery_line(delivery: Delivery) -> str:
    """One printed line: time, event type, object id, outcome and the status answered."""
    event = delivery.event
    kind = event.type if event else "-"
    obj = (event.object_id if event else None) or "-"
    outcome = delivery.outcome
    if delivery.forward_status is not None and delivery.outcome == "verified":
        outcome = f"verified, forwarded {delivery.forward_status}"
    elif delivery.reason and delivery.outcome != "duplicate":
        outcome = f"{outcome}: {delivery.reason}"
    elif delivery.outcome == "duplicate":
        outcome = "duplicate, already received: not processed again"
    when = delivery.received_at.strftime("%H:%M:%SZ")
    attempt = f" (attempt {delivery.attempt})" if delivery.attempt else ""
    return f"{when}  {kind:<28} {obj:<30} {outcome} -> {delivery.status}{attempt}"


def attempt_line(event_id: str, attempt: DeliveryAttempt) -> str:
    """One earlier attempt, printed under a redelivery: time, number, status or error."""
    when = attempt.attempted_at.strftime("%H:%M:%SZ") if attempt.attempted_at else "-"
    if attempt.status_code is not None:
        outcome = f"answered {attempt.status_code}"
    else:
        outcome = attempt.error or "no answer"
    return f"{when:<9}  earlier attempt {attempt.attempt} of {event_id}: {outcome}"


def delivery_record(delivery: Delivery) -> dict[str, Any]:
    """One JSON line of ``--log``: what happened, never the body, signature or secret."""
    event = delivery.event
    return {
        "receivedAt": delivery.received_at.isoformat().replace("+00:00", "Z"),
        "path": delivery.path,
        "status": delivery.status,
        "outcome": delivery.outcome,
        "eventId": event.id if event else None,
        "type": event.type if event else None,
        "object": event.object_id if event else None,
        "reason": delivery.reason,
        "forwardStatus": delivery.forward_status,
        "attempt": delivery.attempt,
    }


class _Reporter:
    """Prints and logs deliveries; called from the listener's threads."""

    def __init__(self, log: IO[str] | None, dashboard: str | None = None) -> None:
        self._log = log
        #: The local sandbox's address: each event's dashboard page is printed too.
        self._dashboard = dashboard
        self._lock = threading.Lock()
        self.counts: dict[str, int] = {}
        #: Called after each delivery is reported (`_EarlierAttempts`).
        self.then: Callable[[Delivery], None] | None = None

    def __call__(self, delivery: Delivery) -> None:
        with self._lock:
            self.counts[delivery.outcome] = self.counts.get(delivery.outcome, 0) + 1
            click.echo(delivery_line(delivery))
            link = self._link(delivery)
            if link is not None:
                click.echo(f"{'':<9}  {link}")
            if self._log is not None:
                self._log.write(json.dumps(delivery_record(delivery)) + "\n")
                self._log.flush()
        if self.then is not None:
            self.then(delivery)

    def _link(self, delivery: Delivery) -> str | None:
        if self._dashboard is None or delivery.event is None:
            return None
        from workbench.cli._dashboard_links import dashboard_link

        return dashboard_link(self._dashboard, delivery.event.id)

    def echo(self, line: str) -> None:
        """Print a line between deliveries' lines, never inside one."""
        with self._lock:
            click.echo(line)


class _EarlierAttempts:
    """Prints a redelivery's earlier attempts, read from the local sandbox, off the
    listener's threads (one at a time, in the order the deliveries came)."""

    def __init__(self, settings: Settings, echo: Callable[[str], None]) -> None:
        self._settings = settings
        self._echo = echo
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="earlier-attempts")

    def __call__(self, delivery: Delivery) -> None:
        if delivery.event is not None and (delivery.attempt or 0) > 1:
            self._pool.submit(self._show, delivery.event.id, delivery.attempt or 0)

    def _show(self, event_id: str, attempt: int) -> None:
        try:
            with _sandbox_client(self._settings) as client:
                found = client.sandbox.deliveries(event_id, timeout=10)
        except Exception as exc:  # the delivery was answered; say why there is no history
            self._echo(f"{'':<9}  earlier attempts of {event_id}: not read ({type(exc).__name__})")
            return
        for earlier in found.attempts:
            if earlier.attempt < attempt:
                self._echo(attempt_line(event_id, earlier))

    def close(self) -> None:
        """Drop what is not yet read; wait for the one being read."""
        self._pool.shutdown(wait=True, cancel_futures=True)


def _sandbox_client(settings: Settings) -> Client:
    from workbench._client import Client

    return Client(settings=settings, max_retries=1)


def _resolve_secret(given: str | None, settings: Settings) -> str:
    secret = given or os.environ.get(ENV_WEBHOOK_SECRET)
    if secret:
        return secret
    if settings.environment is not Environment.LOCAL:
        raise click.UsageError(
            f"no webhook secret: pass --secret or set {ENV_WEBHOOK_SECRET} "
            "(the secret of the store's webhook endpoint)"
        )
    from workbench._exceptions import WorkbenchError

    try:
        with _sandbox_client(settings) as client:
            found = client.sandbox.fixtures().webhook_secret
    except WorkbenchError as exc:  # a sandbox not started yet, most often
        raise click.ClickException(f"cannot read the sandbox's webhook secret: {exc}") from None
    if not found:
        raise click.UsageError("the sandbox lists no webhook secret for your store")
    return found


@contextlib.contextmanager
def _store_webhook(settings: Settings, url: str) -> Iterator[None]:
    """Point the store's webhook at ``url`` (sandbox control route); restore it after."""
    with _sandbox_client(settings) as client:
        fixtures = client.sandbox.fixtures()
        store = next((s for s in fixtures.stores if s.id == fixtures.store_id), None)
        previous = store.webhook_url if store else None
        sent: list[str | None] = []
        client.add_observer(lambda info, _body: sent.append(info.request_id))
        client.sandbox.set_webhook(url)
        click.echo(f"Store {fixtures.store_id} webhook -> {url} (set back on exit)")
        page = settings.request_page(sent[-1] if sent else None)
        if page:  # the local sandbox: the request that set it, in the dashboard
            click.echo(f"  set by the request {page}")
        try:
            yield
        finally:
            client.sandbox.set_webhook(previous)
            click.echo(f"Store {fixtures.store_id} webhook set back to {previous or 'none'}")


class _Stop:
    """Whether a signal asked the listener to stop: a plain attribute, which the signal
    handler sets and the main loop polls. A handler that set a `threading.Event` could
    land while the main thread, waiting on that event, held its lock, and then wait for
    that lock forever (the listener hung after Ctrl-C, on a loaded machine)."""

    requested = False


@contextlib.contextmanager
def _stop_on_signals(stop: _Stop, ready: threading.Event) -> Iterator[None]:
    """SIGTERM and Ctrl-C (SIGINT) set ``stop`` instead of raising where they land.

    Ctrl-C raised as KeyboardInterrupt could land inside `threading.Event.wait`
    (which then fails on its own lock) or cut the clean-up short (the store's webhook
    left pointing at a closed port); click then printed "Aborted!". Before the
    listener is ready, Ctrl-C still interrupts what it is waiting for; once stopping,
    a second one is ignored until the clean-up is done, and after it: a Ctrl-C pressed
    twice may land after the summary, as the command ends, where it would still print
    "Aborted!". The other handlers are restored as they were. The handler takes no lock
    (`_Stop`); ``ready.is_set()`` reads a flag without one.
    """

    def _handler(signum: int, frame: FrameType | None) -> None:
        if signum == signal.SIGINT and not ready.is_set():
            raise KeyboardInterrupt
        stop.requested = True

    handled = (signal.SIGTERM, signal.SIGINT)
    try:
        previous = {signum: signal.signal(signum, _handler) for signum in handled}
    except ValueError:  # not the main thread (e.g. under a test runner's thread)
        yield
        return
    try:
        yield
    finally:
        if stop.requested:
            previous[signal.SIGINT] = signal.SIG_IGN
        for signum, handler in previous.items():
            signal.signal(signum, handler)


@click.command("listen")
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option(
    "--port", type=click.IntRange(0, 65535), default=0, show_default=True, help="0: a free port."
)
@click.option(
    "--path",
    default=None,
    help="Path deliveries are posted to (signed with them). "
    "Default: the --forward-to URL's path, else /webhooks.",
)
@click.option(
    "--secret",
    default=None,
    help=f"The store's webhook secret (or set {ENV_WEBHOOK_SECRET}). "
    "Default against a local sandbox: read from its fixtures.",
)
@click.option(
    "--print-secret",
    is_flag=True,
    help="Print the local sandbox's webhook secret alone and exit (for a receiver of "
    "your own, in any language).",
)
@click.option(
    "--set-webhook",
    "set_webhook",
    is_flag=True,
    help="Point the store's webhook at this listener through the local sandbox's "
    "PUT /sandbox/webhook, and set it back on exit.",
)
@click.option(
    "--forward-to",
    default=None,
    metavar="URL",
    help="Post each verified delivery on to URL with the same body and signature headers; "
    "the listener answers what URL answers.",
)
@click.option(
    "--log",
    "log_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Append one JSON line per delivery (no body, signature or secret).",
)
@click.option(
    "--tolerance",
    type=click.IntRange(1, 86_400),
    default=DEFAULT_TOLERANCE,
    show_default=True,
    help="Seconds X-Timestamp may lie from this clock.",
)
def listen(
    host: str,
    port: int,
    path: str | None,
    secret: str | None,
    print_secret: bool,
    set_webhook: bool,
    forward_to: str | None,
    log_path: Path | None,
    tolerance: int,
) -> None:
    """Receive webhooks on a local port, verify each and print one line per delivery.

    Like `stripe listen`: each delivery is checked with
    workbench.webhooks.construct_event (signature, timestamp, replay) and printed as
    time, event type, object id and outcome. Against a local sandbox, the webhook secret
    is printed on start (--print-secret prints it alone), and a redelivery is followed by
    its event's earlier attempts (status or error). The keys and base URL come from
    WORKBENCH_* (or .env), as for the client. Stop with Ctrl-C.
    """
    settings = Settings.load()
    local = settings.environment is Environment.LOCAL
    if print_secret:
        if not local:
            raise click.UsageError(
                "--print-secret reads a local sandbox's secret: the service's webhook "
                "secret is in its dashboard"
            )
        click.echo(_resolve_secret(secret, settings))
        return
    if set_webhook and settings.environment is not Environment.LOCAL:
        raise click.UsageError(
            "--set-webhook works only against a local sandbox: configure the service's "
            "webhook endpoint in its dashboard"
        )
    if path is None:
        path = "/webhooks"
        if forward_to:
            from workbench.signing import canonical_path

            path = canonical_path(forward_to)
    webhook_secret = _resolve_secret(secret, settings)
    stop, ready = _Stop(), threading.Event()
    # The signal handlers are set first so that they are restored last, after the
    # clean-up (the store's webhook set back) has run to its end.
    with _stop_on_signals(stop, ready), contextlib.suppress(KeyboardInterrupt):
        _listen(settings, webhook_secret, stop, ready, host=host, port=port, path=path,
                forward_to=forward_to, log_path=log_path, tolerance=tolerance,
                set_webhook=set_webhook)  # fmt: skip


def _listen(
    settings: Settings,
    webhook_secret: str,
    stop: _Stop,
    ready: threading.Event,
    *,
    host: str,
    port: int,
    path: str,
    forward_to: str | None,
    log_path: Path | None,
    tolerance: int,
    set_webhook: bool,
) -> None:
    with contextlib.ExitStack() as stack:
        log = stack.enter_context(log_path.open("a", encoding="utf-8")) if log_path else None
        local = settings.environment is Environment.LOCAL
        reporter = _Reporter(log, settings.base_url if local else None)
        if settings.environment is Environment.LOCAL:
            earlier = _EarlierAttempts(settings, reporter.echo)
            reporter.then = earlier
            stack.callback(earlier.close)
        listener = WebhookListener(
            webhook_secret,
            host=host,
            port=port,
            path=path,
            tolerance=tolerance,
            forward_to=forward_to,
            on_delivery=reporter,
        )
        try:
            stack.enter_context(listener)
        except OSError as exc:
            raise click.ClickException(f"cannot listen on {host}:{port}: {exc.strerror}") from None
        click.echo(f"Listening on {listener.url} (port {listener.port})")
        # A local sandbox's secret is shown whole, as `stripe listen` shows its own: a
        # receiver of the reader's needs it, and it guards nothing outside this machine.
        shown = webhook_secret if local else mask_secret(webhook_secret)
        click.echo(f"Verifying with the webhook secret {shown}")
        if forward_to:
            click.echo(f"Forwarding verified deliveries to {forward_to}")
        if set_webhook:
            stack.enter_context(_store_webhook(settings, listener.url))
        # Ready before it is said: a Ctrl-C pressed on seeing the line stops the listener
        # (it was raised as KeyboardInterrupt wherever it landed when the line came first).
        ready.set()
        click.echo("Ready. Press Ctrl-C to stop.")
        while not stop.requested:
            time.sleep(0.2)  # a signal interrupts the sleep, its handler sets the flag
    counts = ", ".join(f"{n} {k}" for k, n in sorted(reporter.counts.items())) or "no deliveries"
    click.echo(f"Stopped: {counts}")
