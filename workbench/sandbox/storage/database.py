"""The database and its transactions: `Database`, on an SQLite file or PostgreSQL.

The tables are `workbench.sandbox.tables` (shared) and each feature's ``tables``
module, all on `workbench.sandbox.storage.registry.metadata`.

Every write runs in one transaction through `Database.write` (or `Database.transact`,
which retries it when a concurrent insert wins a race); every read through
`Database.read`; async code uses `Database.atransact` and `Database.aread`. What the
two servers do differently is each one's `workbench.sandbox.storage.backends.Backend`:
`workbench.sandbox.storage.sqlite.SQLiteBackend` (``BEGIN IMMEDIATE`` under a write
lock, an event loop's writes grouped per loop turn) or
`workbench.sandbox.storage.postgres.PostgresBackend` (round trips saved: autocommit
reads, pipelined and unlocked write transactions, batches); `Database` hands it every
such call and never asks which one it holds.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import TypeVar

import sqlalchemy as sa
from sqlalchemy.engine import make_url

from workbench.sandbox.storage.backends import Backend, create_engine, is_memory_url
from workbench.sandbox.storage.plans import ReadPlan
from workbench.sandbox.storage.postgres import (
    PING_AFTER_IDLE_SECONDS,
    PostgresBackend,
    pool_settings,
)
from workbench.sandbox.storage.registry import meta
from workbench.sandbox.storage.sqlite import SQLiteBackend

__all__ = [
    "PING_AFTER_IDLE_SECONDS",
    "Database",
    "create_engine",
    "is_memory_url",
    "open_backend",
    "pool_settings",
]

T = TypeVar("T")


def open_backend(url: str, *, workers: int = 1) -> Backend:
    """The backend for ``url``: SQLite's for ``sqlite:`` URLs, PostgreSQL's otherwise.

    Args:
        url: an SQLAlchemy URL.
        workers: processes serving this database (sizes a PostgreSQL pool).
    """
    if make_url(url).get_backend_name() == "sqlite":
        return SQLiteBackend(url)
    return PostgresBackend(url, workers=workers)


class Database:
    """One engine and the transaction helpers every service uses.

    Args:
        url: an SQLAlchemy URL; ``sqlite://`` and ``sqlite:///:memory:`` give one in-memory
            database shared across threads.
        workers: processes serving this database (sizes a PostgreSQL pool).
    """

    def __init__(self, url: str, *, workers: int = 1) -> None:
        self.url = url
        #: What the database's server does its own way (`Backend`).
        self.backend = backend = open_backend(url, workers=workers)
        self.engine = backend.engine
        self.is_sqlite = self.engine.dialect.name == "sqlite"
        self.is_memory = backend.is_memory
        #: Every process using the database runs on this machine (an SQLite file or an
        #: in-memory database): they may coordinate through files beside it (`sidecar`),
        #: where a server's database may be shared with processes anywhere.
        self.is_local = backend.is_local

    def sidecar(self, name: str) -> str | None:
        """A file beside an SQLite database file, through which its processes coordinate."""
        return self.backend.sidecar(name)

    def dispose(self) -> None:
        """Stop the checkpointer and close every pooled connection and the lock's files."""
        self.backend.dispose()

    def start_checkpoints(self, interval: float = 0.5) -> None:
        """Checkpoint an SQLite file's WAL from a background thread every ``interval`` s.

        A checkpoint copies pages into the database file and syncs it, milliseconds of
        I/O; left to SQLite it happens inside whichever commit crosses the threshold,
        so one request in a few hundred would wait for it. Nothing to do elsewhere.
        """
        self.backend.start_checkpoints(interval)

    def stop_checkpoints(self) -> None:
        """Stop the checkpointer, then fold the whole WAL into the database file."""
        self.backend.stop_checkpoints()

    def checkpoint(self, mode: str) -> None:
        """One WAL checkpoint (``PASSIVE`` never waits for writers; ``TRUNCATE`` does)."""
        self.backend.checkpoint(mode)

    async def run(self, work: Callable[[], T]) -> T:
        """Run short database work (its own transactions) from async code; its result.

        On an SQLite file, ``work`` runs on the event loop with the other writes of this
        loop turn, in one transaction at the start of the next turn; on an in-memory
        database on the loop when the lock is free, in a worker thread otherwise;
        PostgreSQL work, which waits on the network, always in a worker thread
        (`in_thread`). So the loop never blocks on a lock.
        """
        return await self.backend.run(work)

    async def atransact(
        self, work: Callable[[sa.Connection], T], *, plan: ReadPlan | None = None
    ) -> T:
        """`transact` from async code: ``work`` in a write transaction; its result.

        On SQLite as `run` runs it. On PostgreSQL with the other transactions this loop
        asks for meanwhile: those with a ``plan`` of their reads share two round trips
        and one commit; others run one by one, as `transact` runs them.
        """
        if plan is not None:
            work = plan.bind(work)
        return await self.backend.atransact(work, plan)

    async def aread(self, work: Callable[[sa.Connection], T]) -> T:
        """`read` from async code: ``work`` in a read-only transaction; its result.

        On PostgreSQL on the database's threads, since every statement waits on the
        network; on an SQLite file on the event loop itself (a read in WAL mode never
        waits for a writer); on an in-memory database on the loop when its one
        connection is free, in a worker thread otherwise.
        """
        return await self.backend.aread(work)

    async def in_thread(self, work: Callable[[], T]) -> T:
        """Run blocking database work from async code in a worker thread; its result.

        The work sees the caller's context variables (a `ReadPlan` announced).
        """
        return await self.backend.in_thread(work)

    def read(self) -> AbstractContextManager[sa.Connection]:
        """A read-only transaction (on PostgreSQL: autocommit, no BEGIN and COMMIT)."""
        return self.backend.read()

    def write(self, *, unlocked: bool = False) -> AbstractContextManager[sa.Connection]:
        """A write transaction: committed on success, rolled back on any exception.

        On SQLite, inside this thread's open write group, a SAVEPOINT of the group's
        transaction instead, committed with the group. ``unlocked`` (PostgreSQL): an
        attempt without a transaction on the server, which raises
        `statements.LocksNeeded` when the work needs one (see `statements`).
        """
        return self.backend.write(unlocked=unlocked)

    def transact(
        self,
        work: Callable[[sa.Connection], T],
        *,
        plan: ReadPlan | None = None,
        attempts: int = 4,
    ) -> T:
        """Run ``work`` in a write transaction, retrying when a concurrent insert wins a race.

        A unique-constraint violation means another request created the same object
        first; running ``work`` again lets it find that object and answer accordingly.

        ``plan``: the reads ``work`` makes, announced (`ReadPlan`). On PostgreSQL, work
        whose reads were announced is tried unlocked first (two statements, see
        `statements`), and run again locked when that attempt needs locks or loses an
        insert race.
        """
        if plan is not None:
            with plan.announced():
                return self.backend.transact(plan.bind(work), attempts)
        return self.backend.transact(work, attempts)

    def get_meta(self, conn: sa.Connection, key: str) -> str | None:
        """A value of the ``meta`` table."""
        return conn.execute(sa.select(meta.c.value).where(meta.c.key == key)).scalar_one_or_none()
