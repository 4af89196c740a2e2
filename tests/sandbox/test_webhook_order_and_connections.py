"""Webhooks over several connections: each object's events still arrive in order, and
no target ever holds more connections from one sandbox than its bound.

On SQLite and PostgreSQL. Each receiver here runs on 127.0.0.1, speaks HTTP/1.1 with
keep-alive, and counts what it sees; where a test needs attempts to overlap, the
receiver makes its first requests meet at a barrier, so "these were open at once" is a
fact the receiver observed, never a duration hoped for.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Iterator
from datetime import timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
import sqlalchemy as sa

from workbench.sandbox import (
    DEMO_MERCHANT_ID,
    DEMO_STORE_ID,
    OTHER_MERCHANT_ID,
    SandboxServer,
    events,
    tables,
)
from workbench.sandbox.clock import business_now, wall_now
from workbench.sandbox.events import _Delivery, _Outcome, _Outcomes
from workbench.sandbox.fixtures import OTHER_STORE_ID
from workbench.sandbox.runtime import SandboxRuntime
from workbench.spec.events import PaymentCapturedData

#: Guards, not measured figures: far above what the sandbox needs.
GUARD_SECONDS = 30


class Receiver:
    """A keep-alive webhook endpoint: records (event, attempt) in arrival order, the most
    requests and the most connections it held at once. ``answer(event_id, attempt)``
    gives each answer's status; the first ``meet`` requests wait for one another."""

    def __init__(self, answer: Callable[[str, int], int], meet: int = 1) -> None:
        self.arrived: list[tuple[str, int]] = []
        self.open_requests = self.most_requests = 0
        self.open_connections = self.most_connections = 0
        self.met = threading.Event()
        self._barrier = threading.Barrier(meet, timeout=GUARD_SECONDS)
        self._waiting = meet
        self._lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def setup(self) -> None:
                super().setup()
                with receiver._lock:
                    receiver.open_connections += 1
                    receiver.most_connections = max(
                        receiver.most_connections, receiver.open_connections
                    )

            def finish(self) -> None:
                with receiver._lock:
                    receiver.open_connections -= 1
                super().finish()

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers["Content-Length"]))
                pair = (str(self.headers["X-Event-Id"]), int(self.headers["X-Event-Attempt"]))
                with receiver._lock:
                    receiver.arrived.append(pair)
                    receiver.open_requests += 1
                    receiver.most_requests = max(receiver.most_requests, receiver.open_requests)
                    first = receiver._waiting > 0
                    receiver._waiting -= 1
                status = answer(*pair)
                if first:
                    try:
                        receiver._barrier.wait()
                        receiver.met.set()
                    except threading.BrokenBarrierError:
                        status = 503
                with receiver._lock:
                    receiver.open_requests -= 1
                self.send_response(status)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/hooks"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def receivers() -> Iterator[list[Receiver]]:
    made: list[Receiver] = []
    yield made
    for receiver in made:
        receiver.close()


def _queue(
    runtime: SandboxRuntime,
    url: str,
    *,
    count: int,
    objects: int,
    merchant: str = DEMO_MERCHANT_ID,
    store: str = DEMO_STORE_ID,
) -> list[tuple[str, str]]:
    """``count`` events to ``url``, about ``objects`` payments in turn (interleaved);
    returns (event, payment) in the order they were made."""
    made = []
    with runtime.db.write() as conn:
        now = business_now(conn, merchant)
        for n in range(count):
            payment = f"pay_{merchant[-4:]}order{n % objects:04d}"
            data = PaymentCapturedData(
                payment_id=payment,
                transaction_id=f"order-{n}",
                status="captured",
                amount=1_000 + n,
                currency="TRY",
            )
            event_id = events.emit(
                conn, merchant_id=merchant, store_id=store, data=data, now=now, target_url=url
            )
            made.append((event_id, payment))
    return made


def _states(runtime: SandboxRuntime, made: list[tuple[str, str]]) -> dict[str, str]:
    e = tables.events
    with runtime.db.read() as conn:
        rows = conn.execute(
            sa.select(e.c.id, e.c.delivery_state).where(e.c.id.in_([m for m, _ in made]))
        ).all()
    return {row.id: row.delivery_state for row in rows}


def test_each_objects_events_arrive_in_order_over_several_connections(
    sandbox_with: Callable[..., SandboxServer], receivers: list[Receiver]
) -> None:
    failing_first = set()  # events whose first attempt is answered 500

    def answer(event_id: str, attempt: int) -> int:
        return 500 if event_id in failing_first and attempt == 1 else 204

    receivers.append(Receiver(answer, meet=2))
    server = sandbox_with(
        webhook_concurrency=6,
        webhook_connections_per_target=4,
        webhook_timeout_seconds=GUARD_SECONDS,
        webhook_wait_seconds=GUARD_SECONDS,
    )
    runtime = server.sandbox
    made = _queue(runtime, receivers[0].url, count=48, objects=8)
    failing_first.update(event_id for n, (event_id, _) in enumerate(made) if n % 5 == 1)
    for _ in range(20):  # each advance passes a retry's 10 s; a guard, far above the need
        runtime.advance_clock(60)
        if set(_states(runtime, made).values()) == {"delivered"}:
            break
    arrived = list(receivers[0].arrived)
    assert set(_states(runtime, made).values()) == {"delivered"}
    assert receivers[0].met.is_set(), "two attempts were never open at once"
    assert receivers[0].most_requests >= 2
    assert receivers[0].most_connections <= 4
    retried = [event_id for event_id, attempt in arrived if attempt == 2]
    assert sorted(retried) == sorted(failing_first)
    for payment in {p for _, p in made}:
        mine = [event_id for event_id, p in made if p == payment]
        seen = [event_id for event_id, _ in arrived if event_id in mine]
        # Every attempt of an event comes before the first attempt of the object's next.
        firsts = [seen.index(event_id) for event_id in mine]
        lasts = [len(seen) - 1 - seen[::-1].index(event_id) for event_id in mine]
        assert all(lasts[i] < firsts[i + 1] for i in range(len(mine) - 1)), (payment, seen)


def test_a_target_never_holds_more_connections_than_its_bound(
    sandbox_with: Callable[..., SandboxServer], receivers: list[Receiver]
) -> None:
    """Two merchants' passes at once, each allowed 8 attempts in flight, to one target
    bounded at 3 connections: the receiver holds its first 3 requests until all three
    are open, so 3 at once happened, and never sees a fourth connection."""
    bound = 3
    receivers.append(Receiver(lambda _event, _attempt: 204, meet=bound))
    server = sandbox_with(
        webhook_concurrency=8,
        webhook_connections_per_target=bound,
        webhook_timeout_seconds=GUARD_SECONDS,
        webhook_wait_seconds=GUARD_SECONDS,
    )
    runtime = server.sandbox
    url = receivers[0].url
    made = _queue(runtime, url, count=16, objects=16)
    made += _queue(
        runtime, url, count=16, objects=16, merchant=OTHER_MERCHANT_ID, store=OTHER_STORE_ID
    )
    passes = [
        threading.Thread(target=runtime.tick, args=(merchant,))
        for merchant in (DEMO_MERCHANT_ID, OTHER_MERCHANT_ID)
    ]
    for each in passes:
        each.start()
    for each in passes:
        each.join(GUARD_SECONDS * 2)
    for _ in range(5):  # what a pass left open is finished by the next (a guard)
        if set(_states(runtime, made).values()) == {"delivered"}:
            break
        runtime.tick()
    print(
        f"{len(receivers[0].arrived)} requests, at most {receivers[0].most_connections} "
        f"connections and {receivers[0].most_requests} requests at once"
    )
    assert set(_states(runtime, made).values()) == {"delivered"}
    assert receivers[0].met.is_set(), "the bound's worth of attempts was never open at once"
    assert receivers[0].most_connections <= bound
    assert receivers[0].most_requests <= bound
    assert len(receivers[0].arrived) == len(made)


def test_the_next_delivery_due_is_the_earliest_head_not_in_flight(
    sandbox_with: Callable[..., SandboxServer],
) -> None:
    """`WebhookWork.next_due` (one query, a scan that stops at the oldest never-attempted
    head) against its definition: the earliest head, of every pending event, not in
    flight. A retry due later than a younger object's first attempt, one due sooner, a
    blocked event older than both, an attempt in flight, a lapsed claim."""
    runtime = sandbox_with().sandbox
    work = runtime._webhooks
    assert work is not None
    made = _queue(runtime, "http://127.0.0.1:9/hooks", count=6, objects=3)
    e = tables.events

    def definition() -> object:
        wall = wall_now()
        with runtime.db.read() as conn:
            heads = list(work._heads(conn, DEMO_MERCHANT_ID))
        free = [h.next_attempt_at for h in heads if not h.claimed_until or h.claimed_until <= wall]
        return min(free, default=None)

    def due() -> object:
        with runtime.db.read() as conn:
            return work.next_due(conn, DEMO_MERCHANT_ID)

    def change(event: int, **values: Any) -> None:
        with runtime.db.write() as conn:
            conn.execute(sa.update(e).where(e.c.id == made[event][0]).values(**values))

    with runtime.db.read() as conn:
        start = business_now(conn, DEMO_MERCHANT_ID)
    seen = [(due(), definition())]
    change(0, attempts=1, next_attempt_at=start + timedelta(minutes=5))  # a retry, later
    seen.append((due(), definition()))
    change(1, attempts=2, next_attempt_at=start + timedelta(minutes=1))
    change(2, attempts=1, claimed_until=wall_now() + timedelta(hours=1))  # in flight
    seen.append((due(), definition()))
    change(2, claimed_until=wall_now() - timedelta(seconds=1))  # its process died
    seen.append((due(), definition()))
    for event in range(3):
        change(event, delivery_state="delivered", claimed_until=None)
    change(4, attempts=1, next_attempt_at=start - timedelta(minutes=1))
    seen.append((due(), definition()))
    for event in range(6):
        change(event, delivery_state="delivered")
    seen.append((due(), definition()))
    assert [mine for mine, _ in seen] == [wanted for _, wanted in seen]
    assert seen[-1] == (None, None)


def test_an_outcome_that_cannot_be_written_costs_its_batch_nothing(
    sandbox_with: Callable[..., SandboxServer],
) -> None:
    """Outcomes are written together; one whose merchant is gone (deleted while its
    attempt was open) fails alone, and the one written beside it is kept."""
    runtime = sandbox_with().sandbox
    work = runtime._webhooks
    assert work is not None
    made = _queue(runtime, "http://127.0.0.1:9/hooks", count=1, objects=1)
    with runtime.db.write() as conn:  # claimed, as a pass does
        conn.execute(sa.update(tables.events).values(attempts=1))
    kept = _Delivery(made[0][0], "payment.captured", "http://127.0.0.1:9/hooks", b"{}", "s", 1)
    lost = _Delivery("evt_gone", "payment.captured", "http://127.0.0.1:9/hooks", b"{}", "s", 1)
    outcomes = _Outcomes(work._record)

    async def both() -> list[object]:
        return await asyncio.gather(
            outcomes.record(_Outcome(DEMO_MERCHANT_ID, kept, 204, None)),
            outcomes.record(_Outcome("mrc_deleted", lost, 204, None)),
            return_exceptions=True,
        )

    answers = asyncio.run(both())
    assert answers[0] is None
    assert isinstance(answers[1], Exception)  # "no such merchant", however it is worded
    assert _states(runtime, made) == {made[0][0]: "delivered"}
