"""`SQLiteBackend`: a file in WAL mode (or an in-memory database), one writer at a time.

Every write transaction starts with ``BEGIN IMMEDIATE`` (a deferred transaction that
later upgrades to a write fails at once, whatever ``busy_timeout`` says) and is
serialised by a `WriteLock`, across processes too on a file: cheaper than spinning on
``busy_timeout``. On a file, an event loop's writes of one loop turn share one
transaction (`LoopWrites`, `TransactionGroup`), and reads run on the loop itself (a
read in WAL mode never waits for a writer). A background thread checkpoints the WAL.
"""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

import anyio.to_thread
import sqlalchemy as sa
from sqlalchemy.engine import make_url
from sqlalchemy.pool import StaticPool

from workbench.sandbox.storage.backends import (
    Backend,
    create_engine,
    is_memory_url,
    retry_races,
)
from workbench.sandbox.storage.groups import TransactionGroup
from workbench.sandbox.storage.loopwrites import LoopWrites
from workbench.sandbox.storage.plans import ReadPlan
from workbench.sandbox.storage.writelock import WriteLock

__all__ = ["SQLiteBackend"]

T = TypeVar("T")
#: WAL pages after which a commit checkpoints by itself; the background checkpointer
#: normally runs long before, off the request path.
_AUTOCHECKPOINT_PAGES = 20_000


class SQLiteBackend(Backend):
    """An SQLite database: a file, or one in memory shared across threads.

    Args:
        url: its SQLAlchemy URL (``sqlite://`` and ``sqlite:///:memory:``: in memory).
    """

    is_local = True

    def __init__(self, url: str) -> None:
        self.is_memory = memory = is_memory_url(url)
        if memory:
            kwargs: dict[str, Any] = {
                "poolclass": StaticPool,
                "connect_args": {"check_same_thread": False},
            }
        else:
            kwargs = {
                "connect_args": {"check_same_thread": False, "timeout": 30},
                # The connection used last serves next (the write groups keep their
                # own, `begin_group`, but the reconciler's do not): a connection
                # that finds the file written by another since it last ran drops its
                # whole page cache and reads the pages again. Handed out in turn (the
                # pool's default), two connections alternated, nearly every group.
                "pool_use_lifo": True,
            }
        self.engine = create_engine(url, **kwargs)
        self._file = None if memory else make_url(url).database
        #: The right to write, across this file's processes (`WriteLock`).
        self.lock = WriteLock(self.sidecar("write.lock"))
        # The in-memory database is one connection: one user at a time.
        self._memory_lock = threading.RLock()
        self._group: TransactionGroup | None = None
        # The write groups' connection, kept between groups (`begin_group`).
        self._writer: sa.Connection | None = None
        # Replaced when another loop writes (tests); the old one finishes on its own loop.
        self._writes: LoopWrites | None = None
        self._checkpointer: threading.Thread | None = None
        self._stop_checkpoints = threading.Event()
        self._install_hooks()

    def _install_hooks(self) -> None:
        memory = self.is_memory
        _bind_null_and_blobs_as_they_are()

        @sa.event.listens_for(self.engine, "connect")
        def _connect(dbapi_conn: Any, _record: Any) -> None:
            dbapi_conn.isolation_level = None  # we issue BEGIN ourselves
            cursor = dbapi_conn.cursor()
            if not memory:
                cursor.execute("PRAGMA journal_mode=WAL")
                cursor.execute("PRAGMA synchronous=NORMAL")
                cursor.execute(f"PRAGMA wal_autocheckpoint={_AUTOCHECKPOINT_PAGES}")
                # Random-keyed indexes (ids, idempotency keys) touch pages all over the
                # file; keep them in memory rather than re-reading them per insert.
                cursor.execute("PRAGMA cache_size=-65536")
                cursor.execute("PRAGMA mmap_size=268435456")
            cursor.execute("PRAGMA busy_timeout=30000")
            cursor.execute("PRAGMA foreign_keys=ON")
            cursor.close()

        @sa.event.listens_for(self.engine, "begin")
        def _begin(conn: sa.Connection) -> None:
            immediate = conn.get_execution_options().get("sqlite_immediate", False)
            # On the driver's connection: through SQLAlchemy's execution path the
            # statement cost a write group a fifth of its fixed time.
            raw = conn.connection.driver_connection
            assert raw is not None
            raw.execute("BEGIN IMMEDIATE" if immediate else "BEGIN")

    def sidecar(self, name: str) -> str | None:
        return None if self._file is None else f"{self._file}-{name}"

    def dispose(self) -> None:
        self.stop_checkpoints()
        if self._group is None:
            self._drop_writer()
        self.engine.dispose()
        self.lock.close()

    def start_checkpoints(self, interval: float) -> None:
        """Checkpoint the file's WAL from a background thread every ``interval`` s.

        A checkpoint copies pages into the database file and syncs it, milliseconds of
        I/O; left to SQLite it happens inside whichever commit crosses the threshold,
        so one request in a few hundred would wait for it.
        """
        if self.is_memory or self._checkpointer is not None:
            return
        self._stop_checkpoints.clear()

        def loop() -> None:
            while not self._stop_checkpoints.wait(interval):
                self.checkpoint("PASSIVE")

        self._checkpointer = threading.Thread(target=loop, name="sqlite-checkpoints", daemon=True)
        self._checkpointer.start()

    def stop_checkpoints(self) -> None:
        if self._checkpointer is None:
            return
        self._stop_checkpoints.set()
        self._checkpointer.join(timeout=10)
        self._checkpointer = None
        self.checkpoint("TRUNCATE")

    def checkpoint(self, mode: str) -> None:
        """One WAL checkpoint (``PASSIVE`` never waits for writers; ``TRUNCATE`` does)."""
        assert mode in ("PASSIVE", "TRUNCATE")
        with self.engine.connect() as conn:
            conn.exec_driver_sql(f"PRAGMA wal_checkpoint({mode})")

    # Transactions -----------------------------------------------------------------

    @contextmanager
    def _memory_guard(self) -> Iterator[None]:
        if self.is_memory:
            with self._memory_lock:
                yield
        else:
            yield

    @contextmanager
    def read(self) -> Iterator[sa.Connection]:
        with self._memory_guard(), self.engine.connect() as conn, conn.begin():
            yield conn

    @contextmanager
    def write(self, *, unlocked: bool = False) -> Iterator[sa.Connection]:
        """A write transaction (``unlocked`` means nothing here); inside this thread's
        open `TransactionGroup` a SAVEPOINT of the group's transaction instead."""
        group = self._own_group()
        if group is not None:
            with group.savepoint() as conn:
                yield conn
            return
        with self._immediate() as conn:
            yield conn

    @contextmanager
    def _immediate(self) -> Iterator[sa.Connection]:
        with (
            self.lock,
            self._memory_guard(),
            self.engine.connect().execution_options(sqlite_immediate=True) as conn,
            conn.begin(),
        ):
            yield conn

    def schema_transaction(self) -> Any:
        """Under the write lock and ``BEGIN IMMEDIATE``."""
        return self._immediate()

    def transact(self, work: Callable[[sa.Connection], T], attempts: int) -> T:
        return retry_races(self._once, work, attempts)

    def _once(self, work: Callable[[sa.Connection], T]) -> T:
        group = self._own_group()
        if group is not None:  # `write`'s savepoint, without two generators
            return group.run(work)
        with self._immediate() as conn:
            return work(conn)

    # Write groups ------------------------------------------------------------------

    def begin_group(self) -> TransactionGroup:
        """Open a group for this thread's writes; the caller holds the write lock.

        Every group runs on the same connection, kept out of the pool in between: a
        checkout and checkin per group cost a lone charge a tenth of its instructions.
        """
        writer = self._writer
        if writer is None:
            writer = self._writer = self.engine.connect().execution_options(sqlite_immediate=True)
        try:
            group = TransactionGroup(writer, self.end_group)
        except BaseException:
            self._drop_writer()
            raise
        self._group = group
        return group

    def _own_group(self) -> TransactionGroup | None:
        """The open group, if this thread opened it (its writes join it as savepoints)."""
        group = self._group
        return group if group is not None and group.thread == threading.get_ident() else None

    def end_group(self, group: TransactionGroup) -> None:
        """Called by the group once it has ended: other writers may go on."""
        if self._group is group:
            self._group = None
        try:
            # A connection something noted on (`info`: the key cache's mark of a key's
            # row written) goes back to the pool after its commit, as after any
            # transaction, since that is when the pool's listeners look; so does one
            # whose commit failed. The next group takes one from the pool.
            if not group.committed or group.conn.info:
                self._drop_writer()
        finally:
            self.lock.release()

    def _drop_writer(self) -> None:
        writer, self._writer = self._writer, None
        if writer is not None:
            writer.close()

    # From async code ---------------------------------------------------------------

    async def run(self, work: Callable[[], T]) -> T:
        """On a file, ``work`` runs on the event loop with the other writes of this loop
        turn, in one transaction at the start of the next turn (`LoopWrites`): a
        charge's transaction takes less time than handing it to a thread and back. On
        an in-memory database it runs on the loop at once when the lock is free, in a
        worker thread otherwise. So the loop never blocks on a lock."""
        if not self.is_memory:
            loop = asyncio.get_running_loop()
            writes = self._writes
            if writes is None or writes.loop is not loop:
                writes = self._writes = LoopWrites(self.lock, self.begin_group, loop)
            return await writes.run(work)
        if not self.lock.acquire(blocking=False):
            return await anyio.to_thread.run_sync(work)
        try:  # one shared connection: no room for a second transaction, so no group
            return work()
        finally:
            self.lock.release()

    async def atransact(self, work: Callable[[sa.Connection], T], plan: ReadPlan | None) -> T:
        """As `run` runs it; a read runs when it is run, nothing to announce."""
        del plan
        return await self.run(lambda: self.transact(work, 4))

    async def aread(self, work: Callable[[sa.Connection], T]) -> T:
        """On a file on the event loop itself: a read in WAL mode never waits for a
        writer, and takes less time than handing it to a thread and back. On an
        in-memory database on the loop when its one connection is free, in a worker
        thread otherwise."""

        def run() -> T:
            with self.read() as conn:
                return work(conn)

        if not self.is_memory:
            return run()
        if not self._memory_lock.acquire(blocking=False):
            return await anyio.to_thread.run_sync(run)
        try:
            return run()
        finally:
            self._memory_lock.release()

    async def in_thread(self, work: Callable[[], T]) -> T:
        """anyio's worker threads."""
        return await anyio.to_thread.run_sync(work)


def _as_they_are(value: T) -> T:
    return value


def _bind_null_and_blobs_as_they_are() -> None:
    """Bind ``None`` and blobs (``memoryview``) without the sqlite3 module's adaptation.

    The module looks up an adapter for every parameter that is not an ``int``,
    ``float``, ``str`` or ``bytearray``; finding none, it asks its protocol for
    ``__adapt__``, which raises and formats an AttributeError that it then discards:
    ten times a card charge (its NULL columns and stored bodies). A registered adapter
    is found first; these hand the value on unchanged, so what is bound is the same.
    The registry is the sqlite3 module's, shared by the whole process.
    """
    sqlite3.register_adapter(type(None), _as_they_are)
    sqlite3.register_adapter(memoryview, _as_they_are)
