"""The reconciler: one worker per database running the background work that fell due.

Work is a registry of `DueWork` handlers (refund settlement, session expiry, 3DS
timeouts, webhook delivery; subscriptions register renewals). Each handler says
when its next item falls due on a merchant's business clock and processes every
item due by a given time. `Reconciler.advance` moves a merchant's clock forward
*through* each due time in order, so work due at 10:00 runs before work due at 11:00
and sees the clock at 10:00.

Only one process runs passes at a time: a lease row in the database (SQLite has a
single writer anyway; on PostgreSQL the row is locked ``FOR UPDATE``). A pass gives the
lease back when it ends, so a clock advance asked of another worker waits one pass at
most; the lease's expiry only frees it from a process that died holding it.
"""

from __future__ import annotations

import logging
import threading
import uuid
from contextlib import contextmanager
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Protocol

import sqlalchemy as sa

from workbench.sandbox import db as tables
from workbench.sandbox.clock import business_now, set_business_time, wall_now

if TYPE_CHECKING:
    from collections.abc import Iterator

    from workbench.sandbox.runtime import Sandbox

__all__ = ["DueWork", "Reconciler"]

logger = logging.getLogger("workbench.sandbox.reconciler")

_LEASE = "reconciler"
_LEASE_SECONDS = 30
#: How long a clock advance or a tick waits for another process's pass to end.
_WAIT_SECONDS = 30
_MAX_STEPS = 10_000


class DueWork(Protocol):
    """A kind of background work the reconciler runs."""

    name: str

    def next_due(self, conn: sa.Connection, merchant_id: str) -> datetime | None:
        """When this merchant's earliest pending item falls due (``None``: nothing pending)."""
        ...

    def run(self, sandbox: Sandbox, merchant_id: str, now: datetime) -> int:
        """Process every item due at or before ``now``; return how many were processed."""
        ...


class Reconciler:
    """Runs `DueWork` for each merchant: on demand, on clock advance, or on a thread."""

    def __init__(self, sandbox: Sandbox) -> None:
        self.sandbox = sandbox
        self.work: list[DueWork] = []
        self.holder = uuid.uuid4().hex
        self._lock = threading.RLock()
        self._depth = 0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def register(self, work: DueWork) -> None:
        """Add a kind of work (runs after those registered before it at the same time)."""
        if any(w.name == work.name for w in self.work):
            raise ValueError(f"reconciler work {work.name!r} is already registered")
        self.work.append(work)

    @contextmanager
    def _lease(self, wait: bool) -> Iterator[bool]:
        with self._lock:
            if self._depth:  # already held by an enclosing pass of this thread
                yield True
                return
            deadline = wall_now() + timedelta(seconds=_WAIT_SECONDS)
            while not self._take_lease():
                if not wait or wall_now() > deadline:
                    yield False
                    return
                self._stop.wait(0.1)
            self._depth += 1
            try:
                yield True
            finally:
                self._depth -= 1
                self._release_lease()

    def _take_lease(self) -> bool:
        lease = tables.leases
        now = wall_now()
        with self.sandbox.db.write() as conn:
            row = conn.execute(
                sa.select(lease).where(lease.c.name == _LEASE).with_for_update()
            ).first()
            until = now + timedelta(seconds=_LEASE_SECONDS)
            if row is None:
                conn.execute(
                    sa.insert(lease).values(name=_LEASE, holder=self.holder, expires_at=until)
                )
                return True
            if row.holder != self.holder and row.expires_at > now:
                return False
            conn.execute(
                sa.update(lease)
                .where(lease.c.name == _LEASE)
                .values(holder=self.holder, expires_at=until)
            )
            return True

    def _release_lease(self) -> None:
        lease = tables.leases
        with self.sandbox.db.write() as conn:
            conn.execute(
                sa.update(lease)
                .where(lease.c.name == _LEASE, lease.c.holder == self.holder)
                .values(expires_at=wall_now())
            )

    def _merchants(self, merchant_id: str | None) -> list[str]:
        if merchant_id is not None:
            return [merchant_id]
        with self.sandbox.db.read() as conn:
            return list(conn.execute(sa.select(tables.merchants.c.id)).scalars())

    def _run_all(self, merchant_id: str, now: datetime) -> dict[str, int]:
        return {w.name: w.run(self.sandbox, merchant_id, now) for w in self.work}

    def tick(self, merchant_id: str | None = None, *, wait: bool = True) -> dict[str, int]:
        """One pass now, for one merchant or all; returns the items processed per work."""
        totals = {w.name: 0 for w in self.work}
        with self._lease(wait) as held:
            if not held:
                return totals
            for merchant in self._merchants(merchant_id):
                with self.sandbox.db.read() as conn:
                    now = business_now(conn, merchant)
                for name, count in self._run_all(merchant, now).items():
                    totals[name] += count
        return totals

    def _dues(self, merchant_id: str) -> dict[str, datetime]:
        with self.sandbox.db.read() as conn:
            dues = {w.name: w.next_due(conn, merchant_id) for w in self.work}
        return {name: due for name, due in dues.items() if due is not None}

    def advance(self, merchant_id: str, seconds: float) -> datetime:
        """Move the merchant's clock ``seconds`` forward, running due work in order.

        The clock stops at each due time on the way; only the work due by then runs
        there, so an item due at 10:00 is processed before one due at 11:00.

        Returns:
            The merchant's new business time.
        """
        with self._lease(wait=True) as held:
            if not held:
                raise TimeoutError("another process has held the reconciler lease too long")
            with self.sandbox.db.read() as conn:
                target = business_now(conn, merchant_id) + timedelta(seconds=seconds)
            for _ in range(_MAX_STEPS):
                dues = self._dues(merchant_id)
                step = min(dues.values(), default=None)
                if step is None or step > target:
                    break
                with self.sandbox.db.write() as conn:
                    set_business_time(conn, merchant_id, step)
                now = max(step, self._now(merchant_id))
                processed = sum(
                    w.run(self.sandbox, merchant_id, now)
                    for w in self.work
                    if w.name in dues and dues[w.name] <= now
                )
                if processed == 0:
                    break
            with self.sandbox.db.write() as conn:
                set_business_time(conn, merchant_id, target)
            self._run_all(merchant_id, self._now(merchant_id))
            return self._now(merchant_id)

    def _now(self, merchant_id: str) -> datetime:
        with self.sandbox.db.read() as conn:
            return business_now(conn, merchant_id)

    def start(self) -> None:
        """Run passes on a daemon thread every ``reconciler_interval_seconds``."""
        if self._thread is not None:
            return
        self._stop.clear()
        self._thread = threading.Thread(target=self._loop, name="sandbox-reconciler", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop the background thread (waits for the current pass)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=30)
            self._thread = None

    def _loop(self) -> None:
        interval = self.sandbox.config.reconciler_interval_seconds
        while not self._stop.wait(interval):
            try:
                self.tick(wait=False)
            except Exception:
                logger.exception("reconciler pass failed")
