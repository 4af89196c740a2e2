"""The reconciler: one worker per database running the background work that fell due.

Work is a list of `DueWork` handlers (refund settlement, session expiry, 3DS timeouts,
webhook delivery, subscription renewals), each built with what it needs (the database,
its settings) and registered by whoever assembles the sandbox. Each handler says
when its next item falls due on a merchant's business clock and processes every
item due by a given time. `Reconciler.advance` moves a merchant's clock forward
*through* each due time in order, so work due at 10:00 runs before work due at 11:00
and sees the clock at 10:00.

Only one process runs a merchant's passes at a time: a lease row per merchant in the
database (SQLite has a single writer anyway; on PostgreSQL the row is locked ``FOR
UPDATE``). A pass gives the lease back when it ends, so a clock advance asked of another
worker waits one pass at most; the lease's expiry only frees it from a process that died
holding it. Leases are per merchant so that one merchant's slow work (a webhook receiver
that takes its time) never holds up another merchant's clock; the background loop runs
each merchant's pass on a small pool for the same reason. Nor does it hold up its own
merchant's: a pass, and a clock advance in all its steps, waits on receivers
``patience_seconds`` at most, and the attempts still open carry on after it.
"""

from __future__ import annotations

import logging
import threading
import time
import uuid
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Protocol

import sqlalchemy as sa

from workbench.sandbox import tables
from workbench.sandbox.clock import business_now, set_business_time, wall_now

if TYPE_CHECKING:
    from collections.abc import Iterator

    from workbench.sandbox.storage import Database

__all__ = ["DueWork", "Reconciler"]

logger = logging.getLogger("workbench.sandbox.reconciler")

_LEASE_PREFIX = "reconciler:"
_LEASE_SECONDS = 30
#: How long a clock advance or a tick waits for another process's pass to end.
_WAIT_SECONDS = 30
_MAX_STEPS = 10_000
#: Merchants whose background passes may run at once.
_POOL_SIZE = 4


def lease_name(merchant_id: str) -> str:
    """The lease row that guards one merchant's passes."""
    return f"{_LEASE_PREFIX}{merchant_id}"


class DueWork(Protocol):
    """A kind of background work the reconciler runs."""

    name: str

    def next_due(self, conn: sa.Connection, merchant_id: str) -> datetime | None:
        """When this merchant's earliest pending item falls due (``None``: nothing pending)."""
        ...

    def run(self, merchant_id: str, now: datetime, deadline: float) -> int:
        """Process every item due at or before ``now``; return how many were processed.

        ``deadline`` (`time.monotonic`) bounds how long work that waits on others (a
        webhook receiver's answer) keeps the pass waiting; what is still open then
        carries on after it. Work that waits on nobody does not look at it.
        """
        ...

    def pending_merchants(self, conn: sa.Connection) -> set[str]:
        """The merchants with anything pending, whatever their clocks say (a pass for
        any other would process nothing)."""
        ...


class Reconciler:
    """Runs `DueWork` for each merchant: on demand, on clock advance, or on a thread.

    Args:
        db: the database whose leases and clocks it keeps.
        interval_seconds: how often the background thread (`start`) runs passes.
        patience_seconds: how long one pass, or one clock advance in all, waits for
            others (webhook receivers' answers) before it ends and leaves them to
            carry on: a tick or an advance answers within it whatever receivers do.
    """

    def __init__(
        self, db: Database, interval_seconds: float, patience_seconds: float = 10.0
    ) -> None:
        self.db = db
        self.interval_seconds = interval_seconds
        self.patience_seconds = patience_seconds
        self.work: list[DueWork] = []
        self.holder = uuid.uuid4().hex
        self._guard = threading.Lock()
        self._locks: dict[str, threading.RLock] = {}
        self._depths: dict[str, int] = {}
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._pool: ThreadPoolExecutor | None = None
        self._running: dict[str, Future[dict[str, int]]] = {}

    def register(self, work: DueWork) -> None:
        """Add a kind of work (runs after those registered before it at the same time)."""
        if any(w.name == work.name for w in self.work):
            raise ValueError(f"reconciler work {work.name!r} is already registered")
        self.work.append(work)

    def _lock_for(self, merchant_id: str) -> threading.RLock:
        with self._guard:
            return self._locks.setdefault(merchant_id, threading.RLock())

    @contextmanager
    def _lease(self, merchant_id: str, wait: bool) -> Iterator[bool]:
        with self._lock_for(merchant_id):
            if self._depths.get(merchant_id):  # held by an enclosing pass of this thread
                yield True
                return
            deadline = wall_now() + timedelta(seconds=_WAIT_SECONDS)
            while not self._take_lease(merchant_id):
                if not wait or wall_now() > deadline:
                    yield False
                    return
                self._stop.wait(0.1)
            self._depths[merchant_id] = 1
            try:
                yield True
            finally:
                self._depths[merchant_id] = 0
                self._release_lease(merchant_id)

    def _take_lease(self, merchant_id: str) -> bool:
        lease, name = tables.leases, lease_name(merchant_id)
        now = wall_now()
        with self.db.write() as conn:
            row = conn.execute(
                sa.select(lease).where(lease.c.name == name).with_for_update()
            ).first()
            until = now + timedelta(seconds=_LEASE_SECONDS)
            if row is None:
                conn.execute(
                    sa.insert(lease).values(name=name, holder=self.holder, expires_at=until)
                )
                return True
            if row.holder != self.holder and row.expires_at > now:
                return False
            conn.execute(
                sa.update(lease)
                .where(lease.c.name == name)
                .values(holder=self.holder, expires_at=until)
            )
            return True

    def _release_lease(self, merchant_id: str) -> None:
        lease = tables.leases
        with self.db.write() as conn:
            conn.execute(
                sa.update(lease)
                .where(lease.c.name == lease_name(merchant_id), lease.c.holder == self.holder)
                .values(expires_at=wall_now())
            )

    def _merchants(self, merchant_id: str | None) -> list[str]:
        """``merchant_id``, or every merchant with anything pending: a sandbox holding
        thousands of merchants (one per test, per notebook run) takes no lease and runs
        no query per idle merchant on each pass."""
        if merchant_id is not None:
            return [merchant_id]
        with self.db.read() as conn:
            pending = set().union(*(w.pending_merchants(conn) for w in self.work))
        return sorted(pending)

    def _run_all(self, merchant_id: str, now: datetime, deadline: float) -> dict[str, int]:
        return {w.name: w.run(merchant_id, now, deadline) for w in self.work}

    def _deadline(self) -> float:
        return time.monotonic() + self.patience_seconds

    def tick(self, merchant_id: str | None = None, *, wait: bool = True) -> dict[str, int]:
        """One pass now, for one merchant or all; returns the items processed per work."""
        totals = {w.name: 0 for w in self.work}
        for merchant in self._merchants(merchant_id):
            for name, count in self._pass(merchant, wait).items():
                totals[name] += count
        return totals

    def _pass(self, merchant_id: str, wait: bool) -> dict[str, int]:
        with self._lease(merchant_id, wait) as held:
            if not held:
                return {w.name: 0 for w in self.work}
            with self.db.read() as conn:
                now = business_now(conn, merchant_id)
            return self._run_all(merchant_id, now, self._deadline())

    def _dues(self, merchant_id: str) -> dict[str, datetime]:
        with self.db.read() as conn:
            dues = {w.name: w.next_due(conn, merchant_id) for w in self.work}
        return {name: due for name, due in dues.items() if due is not None}

    def advance(self, merchant_id: str, seconds: float) -> datetime:
        """Move the merchant's clock ``seconds`` forward, running due work in order
        (`advance_to` the time ``seconds`` after its business time now).

        Returns:
            The merchant's new business time.
        """
        with self.db.read() as conn:
            target = business_now(conn, merchant_id) + timedelta(seconds=seconds)
        return self.advance_to(merchant_id, target)

    def advance_to(self, merchant_id: str, target: datetime) -> datetime:
        """Move the merchant's clock to ``target``, running due work in order.

        The clock stops at each due time on the way; only the work due by then runs
        there, so an item due at 10:00 is processed before one due at 11:00. Run again
        with the same ``target`` (an advance cut off by a crash, replayed), it carries on
        from where the clock stands and stops at the same time: a clock already past
        ``target`` is not moved, and no work is done twice (each item's own claim).

        Returns:
            The merchant's new business time.
        """
        with self._lease(merchant_id, wait=True) as held:
            if not held:
                raise TimeoutError("another process has held the reconciler lease too long")
            deadline = self._deadline()  # one for the whole advance, however many steps
            for _ in range(_MAX_STEPS):
                dues = self._dues(merchant_id)
                step = min(dues.values(), default=None)
                if step is None or step > target:
                    break
                with self.db.write() as conn:
                    set_business_time(conn, merchant_id, step)
                now = max(step, self._now(merchant_id))
                processed = sum(
                    w.run(merchant_id, now, deadline)
                    for w in self.work
                    if w.name in dues and dues[w.name] <= now
                )
                if processed == 0:
                    break
            with self.db.write() as conn:
                set_business_time(conn, merchant_id, target)
            self._run_all(merchant_id, self._now(merchant_id), deadline)
            return self._now(merchant_id)

    def _now(self, merchant_id: str) -> datetime:
        with self.db.read() as conn:
            return business_now(conn, merchant_id)

    def start(self) -> None:
        """Run passes on a daemon thread every ``reconciler_interval_seconds``."""
        if self._thread is not None:
            return
        self._stop.clear()
        self._pool = ThreadPoolExecutor(_POOL_SIZE, thread_name_prefix="sandbox-pass")
        self._thread = threading.Thread(target=self._loop, name="sandbox-reconciler", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop the background thread (waits for the passes in progress)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=30)
            self._thread = None
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None
        self._running.clear()

    def _loop(self) -> None:
        interval = self.interval_seconds
        while not self._stop.wait(interval):
            try:
                self._schedule_passes()
            except Exception:
                logger.exception("reconciler pass failed")

    def _schedule_passes(self) -> None:
        """Start a pass for each merchant whose previous background pass has ended."""
        pool = self._pool
        if pool is None:
            return
        for merchant in self._merchants(None):
            running = self._running.get(merchant)
            if running is not None and not running.done():
                continue  # a slow pass delays its own merchant only
            future = pool.submit(self._pass, merchant, False)
            future.add_done_callback(_log_failure)
            self._running[merchant] = future


def _log_failure(future: Future[dict[str, int]]) -> None:
    if not future.cancelled() and future.exception() is not None:
        logger.error("reconciler pass failed", exc_info=future.exception())
