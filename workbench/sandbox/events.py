"""Events: recorded with the change that caused them, delivered as signed webhooks.

A webhook is a POST of the event JSON to the target (the session's ``callbackUrl``
or the store's webhook URL), signed with the request-signing scheme of
`workbench.signing` under the store's webhook secret: ``X-Timestamp`` and
``X-Signature`` over (timestamp, ``POST``, the target URL's path, SHA-256 of the
body). A non-2xx answer, a network error or an attempt that outlives its deadline is
retried on the merchant's business clock after 10 s, 1 min, 5 min, 30 min; after
`SandboxConfig.webhook_max_attempts` attempts the event is marked ``failed``.

Each object's events (a payment and its refunds, a subscription, a session) go out in
the order they were made: the next waits until the one before it is delivered or given
up. Events of different objects go out concurrently, a bounded number at once, each
attempt under one total deadline, so a receiver that answers slowly, or a byte at a
time, costs its own deliveries that deadline and nobody else's.

Attempts are claimed in the database, one at a time per merchant whichever process
claims (the merchant's row is locked, SQLite's single writer serialises the same way):
a claim fixes the attempt's number (``attempts`` goes up as it is claimed) and holds the
event until a wall-clock time past the attempt's deadline (``claimed_until``), so no
other worker or host sends that event meanwhile, however far a clock advance moves
business time, and the merchant's attempts in flight, counted there, never exceed the
concurrency limit across processes. A claim whose process died lapses; the event is
then attempted under the next number, so no (event, attempt) pair is ever sent twice.

Attempts run on a thread of their own and record their outcome themselves. A reconciler
pass waits for them only until its deadline (`Reconciler`'s patience: a tick or a
clock advance answers within it whatever the receivers do); attempts still open then
carry on after the pass, each to its own deadline.

Where an event goes is checked twice by `workbench.sandbox.targets`: when the URL is
given, and at each attempt after its host name is resolved; the attempt connects to the
address checked. On a team host (`SandboxConfig.serves_others`) an attempt that got no
HTTP answer is recorded as just that, whatever the reason (connection refused or reset,
a server that does not speak HTTP, no answer in time): the deliveries list would
otherwise tell open, closed and non-HTTP ports of the sandbox's network apart.
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading
import time
from concurrent import futures
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa

from workbench.sandbox import tables
from workbench.sandbox.clock import business_now, iso, wall_now
from workbench.sandbox.ids import new_id
from workbench.sandbox.merchant_secrets import plain_webhook_secret
from workbench.sandbox.replies import dumps
from workbench.sandbox.storage import insert_unread
from workbench.sandbox.targets import TargetRefused, resolve_target
from workbench.signing import format_timestamp, sign_request
from workbench.spec import IdPrefix
from workbench.spec.cards import CARD_NUMBER
from workbench.spec.events import EventData

if TYPE_CHECKING:
    import httpx2

    from workbench.sandbox.sealing import Sealer
    from workbench.sandbox.storage import Database

__all__ = [
    "RETRY_DELAYS",
    "ResendClaim",
    "WebhookWork",
    "emit",
    "list_deliveries",
    "list_events",
    "object_of",
    "objects_of",
]

#: Delay before attempt 2, 3, 4, 5... (the last repeats).
RETRY_DELAYS = (10, 60, 300, 1800)

_E = tables.events
_D = tables.event_deliveries
#: How long a claim outlives its attempt's deadline (wall clock): time to record the
#: outcome. A process that died frees its claims after this.
_CLAIM_SLACK_SECONDS = 30
#: Keys of an event's data that name the object its order is kept for, first wins.
_OBJECT_KEYS = ("paymentId", "subscriptionId", "sessionId")
logger = logging.getLogger("workbench.sandbox.events")
#: A failed attempt's error on a team host, whatever kept the HTTP answer away.
_NO_ANSWER = "no HTTP answer"
_INSERT = sa.insert(_E)
_WEBHOOK_URL = sa.select(tables.stores.c.webhook_url).where(
    tables.stores.c.id == sa.bindparam("f_store")
)


def emit(
    conn: sa.Connection,
    *,
    merchant_id: str,
    store_id: str,
    data: EventData,
    now: datetime,
    target_url: str | None = None,
    look_up_webhook: bool = True,
) -> str:
    """Record an event in the caller's transaction; returns its ``evt_`` id.

    ``data`` is the event's typed definition (`workbench.spec.events`): its class names
    the type, and a field the definition does not name is refused, so no event leaves
    with a field the OpenAPI document's ``webhooks`` section does not describe.
    ``target_url`` is where it goes; ``None``: the store's webhook, looked up, unless
    ``look_up_webhook`` is false (the caller read it already and there is none).

    Raises:
        ValueError: ``data`` holds a field its definition does not name.
    """
    if data.model_extra:
        raise ValueError(
            f"{data.event_type} has no field {', '.join(sorted(data.model_extra))}: add it to "
            f"{type(data).__name__} in workbench.spec.events first"
        )
    if target_url is None and look_up_webhook:
        target_url = conn.execute(_WEBHOOK_URL, {"f_store": store_id}).scalar()
    event_id = new_id(IdPrefix.EVENT)
    payload = {
        "id": event_id,
        "type": data.event_type,
        "createdAt": iso(now),
        "merchantId": merchant_id,
        "data": data.wire(),
    }
    insert_unread(
        conn,
        _INSERT,
        {
            "id": event_id,
            "merchant_id": merchant_id,
            "store_id": store_id,
            "type": data.event_type,
            "payload": dumps(payload),
            "target_url": target_url,
            "delivery_state": "pending" if target_url else "no_endpoint",
            "attempts": 0,
            "next_attempt_at": now if target_url else None,
            "created_at": now,
        },
    )
    return event_id


def list_events(
    conn: sa.Connection, merchant_id: str, type: str | None = None
) -> list[dict[str, Any]]:
    """The merchant's events, oldest first, with their delivery state."""
    query = sa.select(_E).where(_E.c.merchant_id == merchant_id).order_by(_E.c.seq)
    if type:
        query = query.where(_E.c.type == type)
    items = []
    wall = wall_now()
    for row in conn.execute(query):
        items.append(
            {
                **json.loads(row.payload),
                "delivery": {
                    "state": row.delivery_state,
                    "url": row.target_url,
                    # Those made: one under way has its number, not its outcome, yet.
                    "attempts": row.attempts - _in_flight(row.claimed_until, wall),
                    "nextAttemptAt": iso(row.next_attempt_at)
                    if row.delivery_state == "pending"
                    else None,
                    "deliveredAt": iso(row.delivered_at),
                    "lastError": row.last_error,
                },
            }
        )
    return items


def list_deliveries(conn: sa.Connection, merchant_id: str, event_id: str) -> dict[str, Any] | None:
    """One event's delivery state and every attempt made, oldest first (``None``: unknown)."""
    row = conn.execute(
        sa.select(_E).where(_E.c.id == event_id, _E.c.merchant_id == merchant_id)
    ).first()
    if row is None:
        return None
    attempts = conn.execute(
        sa.select(_D).where(_D.c.event_id == event_id).order_by(_D.c.attempt, _D.c.id)
    ).all()
    return {
        "eventId": row.id,
        "type": row.type,
        "object": object_of(json.loads(row.payload)),
        "state": row.delivery_state,
        "url": row.target_url,
        "nextAttemptAt": iso(row.next_attempt_at) if row.delivery_state == "pending" else None,
        "attempts": [
            {
                "attempt": a.attempt,
                "attemptedAt": iso(a.attempted_at),
                "statusCode": a.status_code,
                "error": a.error,
            }
            for a in attempts
        ],
    }


def objects_of(payload: dict[str, Any]) -> set[str]:
    """The objects an event is about; each one's events are delivered in order."""
    data = payload.get("data") or {}
    named = {str(data[key]) for key in _OBJECT_KEYS if data.get(key)}
    return named or {str(payload["id"])}  # an event about nothing else is an order of its own


def object_of(payload: dict[str, Any]) -> str:
    """The main object an event is about (its payment, else subscription, else session)."""
    data = payload.get("data") or {}
    for key in _OBJECT_KEYS:
        if data.get(key):
            return str(data[key])
    return str(payload["id"])


@dataclass(frozen=True, slots=True)
class _Delivery:
    event_id: str
    event_type: str
    url: str
    body: bytes
    secret: str
    attempt: int


class WebhookWork:
    """Reconciler work: deliver the events whose next attempt is due, in order per object.

    Args:
        timeout_seconds: the total deadline of one attempt (connect, send, wait, read).
        concurrency: one merchant's attempts in flight at once, across every process.
        max_attempts: attempts before an event is marked ``failed``.
        allow_private: send to private-range addresses too (`workbench.sandbox.targets`).
        detailed_errors: name why an attempt got no HTTP answer (the exception's kind,
            the deadline); off on a team host, where it would map ports.
        sealer: opens the stores' sealed webhook secrets.
    """

    name = "webhooks"

    def __init__(
        self,
        db: Database,
        timeout_seconds: float,
        concurrency: int,
        max_attempts: int,
        *,
        allow_private: bool = False,
        detailed_errors: bool = True,
        sealer: Sealer | None = None,
    ) -> None:
        self.db = db
        self.sealer = sealer
        self.timeout_seconds = timeout_seconds
        self.concurrency = concurrency
        self.max_attempts = max_attempts
        self.allow_private = allow_private
        self.detailed_errors = detailed_errors
        self._guard = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._http: httpx2.AsyncClient | None = None

    @staticmethod
    def _heads(conn: sa.Connection, merchant_id: str) -> list[Any]:
        """The first pending event of each object: only those may be attempted."""
        rows = conn.execute(
            sa.select(
                _E.c.id,
                _E.c.type,
                _E.c.payload,
                _E.c.target_url,
                _E.c.attempts,
                _E.c.next_attempt_at,
                _E.c.store_id,
                _E.c.claimed_until,
                tables.stores.c.webhook_secret,
            )
            .join(tables.stores, tables.stores.c.id == _E.c.store_id)
            .where(_E.c.merchant_id == merchant_id, _E.c.delivery_state == "pending")
            .order_by(_E.c.seq)
        ).all()
        # An event about several objects (a renewal names its subscription and its payment)
        # waits for every earlier pending event about any of them.
        heads: list[Any] = []
        waiting: set[str] = set()
        for row in rows:
            objects = objects_of(json.loads(row.payload))
            if waiting.isdisjoint(objects):
                heads.append(row)
            waiting |= objects
        return heads

    def pending_merchants(self, conn: sa.Connection) -> set[str]:
        """Merchants with an event waiting for delivery."""
        return set(
            conn.execute(
                sa.select(_E.c.merchant_id).where(_E.c.delivery_state == "pending").distinct()
            ).scalars()
        )

    def next_due(self, conn: sa.Connection, merchant_id: str) -> datetime | None:
        """When the earliest attempt that may be made falls due (one in flight is not)."""
        wall = wall_now()
        return min(
            (
                h.next_attempt_at
                for h in self._heads(conn, merchant_id)
                if not _in_flight(h.claimed_until, wall)
            ),
            default=None,
        )

    def run(self, merchant_id: str, now: datetime, deadline: float) -> int:
        """Start every due attempt the concurrency limit allows, waiting for their
        outcomes until ``deadline`` (`time.monotonic`); returns how many were started.

        An object's next event is attempted in the same pass once the one before it
        is delivered, so a pass that ends before its deadline leaves no due event behind
        a delivered one. Attempts still open at the deadline carry on after it.
        """
        started = 0
        open_: set[futures.Future[bool]] = set()
        while True:
            batch = self._claim(merchant_id, now)
            open_.update(self._start(merchant_id, delivery) for delivery in batch)
            started += len(batch)
            remaining = deadline - time.monotonic()
            if not open_ or remaining <= 0:
                return started
            done, open_ = futures.wait(
                open_, timeout=remaining, return_when=futures.FIRST_COMPLETED
            )
            if not done:
                return started

    def _claim(self, merchant_id: str, now: datetime) -> list[_Delivery]:
        """Claim the due heads the merchant's free slots allow (see the module docstring)."""
        batch: list[_Delivery] = []
        with self.db.write() as conn:
            conn.execute(
                sa.select(tables.merchants.c.id)
                .where(tables.merchants.c.id == merchant_id)
                .with_for_update()
            )
            wall = wall_now()
            busy = conn.execute(
                sa.select(sa.func.count())
                .select_from(_E)
                .where(
                    _E.c.merchant_id == merchant_id,
                    _E.c.delivery_state == "pending",
                    _E.c.claimed_until > wall,
                )
            ).scalar_one()
            free = self.concurrency - int(busy)
            if free <= 0:
                return batch
            until = wall + timedelta(seconds=self.timeout_seconds + _CLAIM_SLACK_SECONDS)
            for row in self._heads(conn, merchant_id):
                if len(batch) == free:
                    break
                if row.next_attempt_at > now or _in_flight(row.claimed_until, wall):
                    continue
                attempt = int(row.attempts) + 1
                if attempt > self.max_attempts:  # its last attempt's claim lapsed
                    conn.execute(
                        sa.update(_E)
                        .where(_E.c.id == row.id)
                        .values(
                            delivery_state="failed",
                            next_attempt_at=None,
                            claimed_until=None,
                            last_error="the sandbox stopped during the last attempt",
                        )
                    )
                    continue
                conn.execute(
                    sa.update(_E)
                    .where(_E.c.id == row.id)
                    .values(attempts=attempt, claimed_until=until)
                )
                batch.append(
                    _Delivery(
                        str(row.id),
                        str(row.type),
                        str(row.target_url),
                        bytes(row.payload),
                        plain_webhook_secret(
                            self.sealer, str(row.store_id), str(row.webhook_secret)
                        ),
                        attempt,
                    )
                )
        return batch

    def _start(self, merchant_id: str, delivery: _Delivery) -> futures.Future[bool]:
        """Send ``delivery`` on the sending thread; the future says whether it was delivered."""
        future = asyncio.run_coroutine_threadsafe(
            self._attempt(merchant_id, delivery), self._sending_loop()
        )
        future.add_done_callback(_log_failure)
        return future

    def _sending_loop(self) -> asyncio.AbstractEventLoop:
        with self._guard:
            if self._loop is None:
                loop = asyncio.new_event_loop()
                thread = threading.Thread(
                    target=loop.run_forever, name="sandbox-webhooks", daemon=True
                )
                thread.start()
                self._loop, self._thread = loop, thread
            return self._loop

    def close(self) -> None:
        """Stop the sending thread; attempts still open are dropped (their claims lapse)."""
        with self._guard:
            loop, thread = self._loop, self._thread
            self._loop = self._thread = None
        if loop is None or thread is None:
            return
        try:
            asyncio.run_coroutine_threadsafe(self._shut(), loop).result(timeout=30)
        finally:
            loop.call_soon_threadsafe(loop.stop)
            thread.join(timeout=30)
            if not thread.is_alive():
                loop.close()

    async def _shut(self) -> None:
        current = asyncio.current_task()
        pending = [task for task in asyncio.all_tasks() if task is not current]
        for task in pending:
            task.cancel()
        await asyncio.gather(*pending, return_exceptions=True)
        if self._http is not None:
            await self._http.aclose()
            self._http = None

    async def _attempt(self, merchant_id: str, delivery: _Delivery) -> bool:
        import httpx2  # with the first delivery: a sandbox that sends none never loads it

        from workbench._transport import default_ssl_context

        if self._http is None:
            self._http = httpx2.AsyncClient(
                timeout=self.timeout_seconds, verify=default_ssl_context()
            )
        started = time.monotonic()
        answer = _Answer()
        try:
            async with asyncio.timeout(self.timeout_seconds):
                status, error = await self._post(self._http, delivery, answer)
        except TimeoutError:
            status = None
            error = (
                f"no answer within {self.timeout_seconds:g} s"
                if self.detailed_errors
                else _NO_ANSWER
            )
        answer.latency_ms = round((time.monotonic() - started) * 1000)
        await asyncio.to_thread(self._record, merchant_id, delivery, status, error, answer)
        return error is None

    async def _post(
        self, http: httpx2.AsyncClient, delivery: _Delivery, answer: _Answer
    ) -> tuple[int | None, str | None]:
        import httpx2

        try:
            # Signing splits the URL too: one stored before the check that both parse
            # (an older database's) is a failed delivery like any other bad target.
            headers = sign_request(
                api_key="webhook",
                secret_key=delivery.secret,
                method="POST",
                url=delivery.url,
                body=delivery.body,
                timestamp=format_timestamp(wall_now()),
            )
            url, host = await resolve_target(delivery.url, allow_private=self.allow_private)
            response = await http.post(
                url,  # the address checked; the name goes in Host and in TLS's SNI
                content=delivery.body,
                extensions={"sni_hostname": host},
                headers={
                    "Host": httpx2.URL(delivery.url).netloc.decode("ascii"),
                    "Content-Type": "application/json",
                    "X-Timestamp": headers.timestamp,
                    "X-Signature": headers.signature,
                    "X-Event-Id": delivery.event_id,
                    "X-Event-Type": delivery.event_type,
                    "X-Event-Attempt": str(delivery.attempt),
                },
            )
        except TargetRefused as exc:
            return None, f"target refused: {exc}"[:300]
        except (httpx2.HTTPError, httpx2.InvalidURL, ValueError, OSError) as exc:
            # InvalidURL is not an HTTPError: a target the merchant typed wrong is a
            # failed delivery, never an error of the request that ran the reconciler.
            return None, f"{type(exc).__name__}"[:300] if self.detailed_errors else _NO_ANSWER
        answer.excerpt = _excerpt(response.content)
        if 200 <= response.status_code < 300:
            return response.status_code, None
        return response.status_code, f"HTTP {response.status_code}"

    def _record(
        self,
        merchant_id: str,
        delivery: _Delivery,
        status: int | None,
        error: str | None,
        answer: _Answer | None = None,
    ) -> None:
        """The attempt's outcome, and the event's next step; its claim ends."""
        answer = answer or _Answer()
        attempt = delivery.attempt
        with self.db.write() as conn:
            now = business_now(conn, merchant_id)
            conn.execute(
                sa.insert(_D).values(
                    event_id=delivery.event_id,
                    merchant_id=merchant_id,
                    attempt=attempt,
                    attempted_at=now,
                    status_code=status,
                    error=error,
                    target_url=delivery.url,
                    latency_ms=answer.latency_ms,
                    response_excerpt=answer.excerpt,
                )
            )
            values: dict[str, Any] = {"last_error": error, "claimed_until": None}
            if error is None:
                values.update(delivery_state="delivered", delivered_at=now, next_attempt_at=None)
            elif attempt >= self.max_attempts:
                values.update(delivery_state="failed", next_attempt_at=None)
            else:
                delay = RETRY_DELAYS[min(attempt - 1, len(RETRY_DELAYS) - 1)]
                values.update(next_attempt_at=now + timedelta(seconds=delay))
            # Only while the claim is this attempt's: a lapsed one was taken over.
            conn.execute(
                sa.update(_E)
                .where(_E.c.id == delivery.event_id, _E.c.attempts == attempt)
                .values(**values)
            )

    # --- the dashboard's resend: one attempt now, outside the retry schedule ---------

    def claim_resend(
        self, conn: sa.Connection, merchant_id: str, event_id: str
    ) -> ResendClaim | str:
        """Claim the next attempt of ``event_id`` now, as a retry would (its number fixed,
        the event held), whatever its state: the claim, or why not (in the caller's
        transaction). An event that went nowhere goes to the store's webhook URL now."""
        stores = tables.stores
        row = conn.execute(
            sa.select(_E, stores.c.webhook_url, stores.c.webhook_secret)
            .join(stores, stores.c.id == _E.c.store_id)
            .where(_E.c.id == event_id, _E.c.merchant_id == merchant_id)
            .with_for_update()
        ).first()
        wall = wall_now()
        url = None if row is None else (row.target_url or row.webhook_url)
        refusal = _resend_refusal(row, url, wall)
        if refusal is not None or row is None or url is None:
            return refusal or "no such event"
        attempt = int(row.attempts) + 1
        until = wall + timedelta(seconds=self.timeout_seconds + _CLAIM_SLACK_SECONDS)
        values: dict[str, Any] = {"attempts": attempt, "claimed_until": until, "target_url": url}
        if row.delivery_state == "no_endpoint":  # it goes out now, and is retried as any
            values.update(delivery_state="pending", next_attempt_at=business_now(conn, merchant_id))
        conn.execute(sa.update(_E).where(_E.c.id == event_id).values(**values))
        secret = plain_webhook_secret(self.sealer, str(row.store_id), str(row.webhook_secret))
        delivery = _Delivery(event_id, str(row.type), url, bytes(row.payload), secret, attempt)
        return ResendClaim(attempt, url, delivery)

    async def send_claimed(self, merchant_id: str, claim: ResendClaim) -> bool:
        """Send a claimed resend on the sending thread; whether it was delivered."""
        future = self._start(merchant_id, claim.delivery)
        return await asyncio.to_thread(future.result)


def _in_flight(claimed_until: datetime | None, wall: datetime) -> bool:
    return claimed_until is not None and claimed_until > wall


def _log_failure(future: futures.Future[bool]) -> None:
    if not future.cancelled() and future.exception() is not None:
        logger.error("webhook attempt failed", exc_info=future.exception())


# --- what the dashboard adds: the receiver's answer kept, and "resend" -----------------

#: Characters of a receiver's answer kept with its attempt.
EXCERPT_CHARS = 300


@dataclass(slots=True)
class _Answer:
    """What an attempt learnt of the receiver besides its status."""

    latency_ms: int | None = None
    excerpt: str | None = None


def _excerpt(body: bytes) -> str | None:
    """The start of a receiver's answer, as text, anything shaped like a card number cut."""
    if not body:
        return None
    text = body[: EXCERPT_CHARS * 4].decode("utf-8", errors="replace")[:EXCERPT_CHARS]
    return CARD_NUMBER.sub("[card number]", text)


@dataclass(frozen=True, slots=True)
class ResendClaim:
    """A resend's attempt, claimed (`WebhookWork.claim_resend`), to send after the commit.

    Attributes:
        attempt: its number.
        url: where it goes.
    """

    attempt: int
    url: str
    delivery: _Delivery


def _resend_refusal(row: Any, url: str | None, wall: datetime) -> str | None:
    if row is None:
        return "no such event"
    if _in_flight(row.claimed_until, wall):
        return "an attempt of this event is under way"
    if not url:
        return "the store has no webhook URL"
    return None
