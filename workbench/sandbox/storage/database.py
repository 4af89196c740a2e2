"""The engine (SQLite in WAL mode, or PostgreSQL) and its transactions: `Database`.

The tables are `workbench.sandbox.tables` (shared) and each feature's ``tables``
module, all on `workbench.sandbox.storage.registry.metadata`.

Every write runs in one transaction through `Database.write`. On SQLite that
transaction starts with ``BEGIN IMMEDIATE`` (a deferred transaction that later
upgrades to a write fails at once, whatever ``busy_timeout`` says) and is
serialised by a `WriteLock`, across processes too on a file; on PostgreSQL rows are
locked with ``SELECT ... FOR UPDATE`` by the services. A unique-constraint race is
retried.

On PostgreSQL every statement is a round trip to the server, which on a small machine
costs more than the statement; so a read (``Database.read``) runs its statements in
autocommit mode (under READ COMMITTED a multi-statement read transaction sees no more
than they do), a pooled connection is pinged only when it sat idle
(`PING_AFTER_IDLE_SECONDS`), the pool is sized for the number of worker processes
sharing the server (`pool_settings`), and `statements` sends a write's first statements
and its last ones with the ``COMMIT`` in one go each.
"""

from __future__ import annotations

import asyncio
import contextvars
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from typing import Any, TypeVar

import anyio.to_thread
import sqlalchemy as sa
from sqlalchemy.engine import make_url
from sqlalchemy.pool import StaticPool

from workbench.sandbox.storage import statements
from workbench.sandbox.storage.groups import TransactionGroup
from workbench.sandbox.storage.loopbatches import LoopBatches
from workbench.sandbox.storage.loopwrites import LoopWrites
from workbench.sandbox.storage.plans import ReadPlan
from workbench.sandbox.storage.registry import meta
from workbench.sandbox.storage.writelock import WriteLock

__all__ = [
    "PING_AFTER_IDLE_SECONDS",
    "Database",
    "create_engine",
    "is_memory_url",
    "pool_settings",
]

T = TypeVar("T")
#: WAL pages after which a commit checkpoints by itself; the background checkpointer
#: normally runs long before, off the request path.
_AUTOCHECKPOINT_PAGES = 20_000
#: A pooled PostgreSQL connection idle for longer than this is pinged before it is
#: handed out (and replaced if the server went away meanwhile, a restart say); one in
#: steady use is not, which saves a round trip per transaction.
PING_AFTER_IDLE_SECONDS = 0.25
#: Connections one process keeps open (as many as it had before this was per worker).
_POOL_KEPT = 10
#: Threads a process runs its PostgreSQL work on (`Database.in_thread`). Fewer than the
#: connections it keeps: each thread wants the GIL back after every round trip, and with
#: ten of them a charge spent longer waiting for it than for the server (two workers,
#: signed charges: 1,216 req/s with 10 threads, 1,521 with 4, 1,577 with 2). Four keep
#: the work going while one or two wait on a row lock.
_PG_THREADS = 4
#: Batches of write transactions (`atransact`) one process has on their way at once;
#: what arrives meanwhile waits for the next and makes it bigger. Two workers, signed
#: charges, a loaded machine (same runs, req/s): unbatched 838-1306, one batch at a
#: time 1385-1942, two 748-1231, three 553-955.
_PG_BATCHES = 1
#: Connections one process may hold at once: one per thread of anyio's default pool, so
#: a request never waits for a connection while holding another.
_POOL_CEILING = 40
#: Server connections left for everything but the workers (psql, the tests' admin
#: connection, the command's own setup) besides the superuser reserve (3 by default).
_POOL_HEADROOM = 13


def pool_settings(workers: int, max_connections: int = 100) -> dict[str, int]:
    """SQLAlchemy pool arguments for one of ``workers`` processes sharing a PostgreSQL server.

    Each process keeps up to 10 connections open and may open more under a burst; all
    of them together stay below the server's ``max_connections`` minus a headroom, so
    ``--workers N`` never meets "too many clients".

    Args:
        workers: processes serving the database.
        max_connections: the server's ``max_connections`` setting.

    Returns:
        ``pool_size`` and ``max_overflow`` for `sqlalchemy.create_engine`.

    Raises:
        ValueError: ``workers`` below 1, or a server with no room for that many.
    """
    if workers < 1:
        raise ValueError("workers must be at least 1")
    budget = min(_POOL_CEILING, (max_connections - _POOL_HEADROOM) // workers)
    if budget < 2:
        raise ValueError(
            f"{workers} workers need at least {2 * workers + _POOL_HEADROOM} connections; "
            f"the server allows {max_connections} (max_connections)"
        )
    kept = min(_POOL_KEPT, budget)
    return {"pool_size": kept, "max_overflow": budget - kept}


def create_engine(url: str, **kwargs: Any) -> sa.Engine:
    """`sqlalchemy.create_engine` with statement parameters kept out of every error.

    SQLAlchemy writes a failed statement's parameters into its exception's text, and so
    into any log or traceback that prints it: the demo key pair written at startup
    (secret key included), a renewal's transaction id. Every engine of the sandbox is
    made here, with ``hide_parameters=True``; the statement itself is still shown.
    """
    return sa.create_engine(url, hide_parameters=True, **kwargs)


def _server_max_connections(url: str) -> int:
    """The PostgreSQL server's ``max_connections`` (100, its default, if it cannot be read)."""
    probe = create_engine(url, poolclass=sa.pool.NullPool)
    try:
        with probe.connect() as conn:
            return int(conn.exec_driver_sql("SHOW max_connections").scalar_one())
    except (sa.exc.SQLAlchemyError, ValueError):
        return 100
    finally:
        probe.dispose()


def is_memory_url(url: str) -> bool:
    """Whether ``url`` names an in-memory SQLite database (one process's alone)."""
    parsed = make_url(url)
    return parsed.get_backend_name() == "sqlite" and parsed.database in (None, "", ":memory:")


class Database:
    """One engine and the transaction helpers every service uses.

    Args:
        url: an SQLAlchemy URL; ``sqlite://`` and ``sqlite:///:memory:`` give one in-memory
            database shared across threads.
        workers: processes serving this database (sizes a PostgreSQL pool).
    """

    def __init__(self, url: str, *, workers: int = 1) -> None:
        parsed = make_url(url)
        self.url = url
        self.is_sqlite = parsed.get_backend_name() == "sqlite"
        self.is_memory = is_memory_url(url)
        #: Every process using the database runs on this machine (an SQLite file or an
        #: in-memory database): they may coordinate through files beside it (`sidecar`),
        #: where a server's database may be shared with processes anywhere.
        self.is_local = self.is_sqlite
        kwargs: dict[str, Any] = {}
        # PostgreSQL work waits on the network: it runs on threads of its own (`in_thread`).
        self._threads: ThreadPoolExecutor | None = None
        if self.is_memory:
            kwargs = {"poolclass": StaticPool, "connect_args": {"check_same_thread": False}}
        elif self.is_sqlite:
            kwargs = {
                "connect_args": {"check_same_thread": False, "timeout": 30},
                # The connection used last serves next (the write groups keep their
                # own, `begin_group`, but the reconciler's do not): a connection
                # that finds the file written by another since it last ran drops its
                # whole page cache and reads the pages again. Handed out in turn (the
                # pool's default), two connections alternated, nearly every group.
                "pool_use_lifo": True,
            }
        else:
            kwargs = {
                **pool_settings(workers, _server_max_connections(url)),
                "pool_use_lifo": True,  # the idle ones stay idle, and get pinged
            }
            self._threads = ThreadPoolExecutor(
                min(_PG_THREADS, kwargs["pool_size"]), thread_name_prefix="pg"
            )
        self.engine = create_engine(url, **kwargs)
        # SQLite has one writer; the in-memory database is one connection. Serialising
        # here is cheaper than spinning on busy_timeout.
        self._file = parsed.database if self.is_sqlite and not self.is_memory else None
        self.lock = WriteLock(self.sidecar("write.lock"))
        self._memory_lock = threading.RLock()
        self._group: TransactionGroup | None = None
        # The write groups' connection, kept between groups (`begin_group`).
        self._writer: sa.Connection | None = None
        # Replaced when another loop writes (tests); the old one finishes on its own loop.
        self._writes: LoopWrites | None = None
        self._batches: LoopBatches | None = None
        self._checkpointer: threading.Thread | None = None
        self._stop_checkpoints = threading.Event()
        if self.is_sqlite:
            self._install_sqlite_hooks()
        else:
            self._install_ping_after_idle()

    def _install_ping_after_idle(self) -> None:
        dialect = self.engine.dialect

        @sa.event.listens_for(self.engine, "before_cursor_execute")
        def _before(conn: sa.Connection, *_args: Any) -> None:
            statements.flush(conn)  # what `statements.defer` queued runs first, in order

        @sa.event.listens_for(self.engine, "checkin")
        def _checkin(_dbapi_conn: Any, record: Any) -> None:
            record.info["idle_since"] = time.monotonic()

        @sa.event.listens_for(self.engine, "checkout")
        def _checkout(dbapi_conn: Any, record: Any, _proxy: Any) -> None:
            since = record.info.get("idle_since")
            if since is None or time.monotonic() - since <= PING_AFTER_IDLE_SECONDS:
                return
            try:
                dialect.do_ping(dbapi_conn)
            except Exception as exc:  # the pool replaces the connection and tries again
                raise sa.exc.DisconnectionError(str(exc)) from exc

    def _install_sqlite_hooks(self) -> None:
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
        """A file beside an SQLite database file, through which its processes coordinate."""
        return None if self._file is None else f"{self._file}-{name}"

    def dispose(self) -> None:
        """Stop the checkpointer and close every pooled connection and the lock's files."""
        self.stop_checkpoints()
        if self._threads is not None:
            self._threads.shutdown(wait=True)
        if self._group is None:
            self._drop_writer()
        self.engine.dispose()
        self.lock.close()

    def start_checkpoints(self, interval: float = 0.5) -> None:
        """Checkpoint an SQLite file's WAL from a background thread every ``interval`` s.

        A checkpoint copies pages into the database file and syncs it, milliseconds of
        I/O; left to SQLite it happens inside whichever commit crosses the threshold,
        so one request in a few hundred would wait for it. Nothing to do elsewhere.
        """
        if not self.is_sqlite or self.is_memory or self._checkpointer is not None:
            return
        self._stop_checkpoints.clear()

        def loop() -> None:
            while not self._stop_checkpoints.wait(interval):
                self.checkpoint("PASSIVE")

        self._checkpointer = threading.Thread(target=loop, name="sqlite-checkpoints", daemon=True)
        self._checkpointer.start()

    def stop_checkpoints(self) -> None:
        """Stop the checkpointer, then fold the whole WAL into the database file."""
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

    async def run(self, work: Callable[[], T]) -> T:
        """Run short database work (its own transactions) from async code; its result.

        On an SQLite file, ``work`` runs on the event loop with the other writes of this
        loop turn, in one transaction at the start of the next turn (`LoopWrites`): a
        charge's transaction takes less time than handing it to a thread and back. On
        an in-memory database it runs on the loop at once when the lock is free, in a
        worker thread otherwise; PostgreSQL work, which waits on the network, always
        runs in a worker thread (`in_thread`). So the loop never blocks on a lock.
        """
        if not self.is_sqlite:
            return await self.in_thread(work)
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

    async def atransact(
        self, work: Callable[[sa.Connection], T], *, plan: ReadPlan | None = None
    ) -> T:
        """`transact` from async code: ``work`` in a write transaction; its result.

        On SQLite as `run` runs it. On PostgreSQL with the other transactions this loop
        asks for meanwhile (`LoopBatches`): those with a ``plan`` of their reads share
        two round trips and one commit; others run one by one, as `transact` runs them,
        on the database's threads.
        """
        if plan is not None:
            work = plan.bind(work)
        if self._threads is None:  # SQLite: a read runs when it is run, nothing to announce
            return await self.run(lambda: self.transact(work))
        if plan is not None:
            with plan.announced():
                return await self._batched(work)
        return await self._batched(work)

    async def _batched(self, work: Callable[[sa.Connection], T]) -> T:
        """PostgreSQL's `atransact`: ``work`` in this loop's next batch."""
        assert self._threads is not None
        loop = asyncio.get_running_loop()
        batches = self._batches
        if batches is None or batches.loop is not loop:
            batches = self._batches = LoopBatches(
                self.engine, self.transact, self._threads, _PG_BATCHES, loop
            )
        return await batches.run(work)

    async def aread(self, work: Callable[[sa.Connection], T]) -> T:
        """`read` from async code: ``work`` in a read-only transaction; its result.

        On PostgreSQL on the database's threads (`in_thread`), since every statement
        waits on the network. On an SQLite file on the event loop itself: a read in WAL
        mode never waits for a writer, and takes less time than handing it to a thread
        and back. On an in-memory database on the loop when its one connection is free,
        in a worker thread otherwise.
        """

        def run() -> T:
            with self.read() as conn:
                return work(conn)

        if not self.is_sqlite:
            return await self.in_thread(run)
        if not self.is_memory:
            return run()
        if not self._memory_lock.acquire(blocking=False):
            return await anyio.to_thread.run_sync(run)
        try:
            return run()
        finally:
            self._memory_lock.release()

    async def in_thread(self, work: Callable[[], T]) -> T:
        """Run blocking database work from async code in a worker thread; its result.

        On PostgreSQL the database's own threads, as many as its pool keeps
        connections, handed the work through `asyncio`'s executor, which costs a charge
        a fraction of what anyio's thread pool does; anyio's elsewhere. Either way the
        work sees the caller's context variables (a `ReadPlan` announced).
        """
        if self._threads is None:
            return await anyio.to_thread.run_sync(work)
        context = contextvars.copy_context()
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._threads, context.run, work)

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

    @contextmanager
    def _memory_guard(self) -> Iterator[None]:
        if self.is_memory:
            with self._memory_lock:
                yield
        else:
            yield

    @contextmanager
    def read(self) -> Iterator[sa.Connection]:
        """A read-only transaction (on PostgreSQL: autocommit, no BEGIN and COMMIT)."""
        with self._memory_guard(), self.engine.connect() as conn:
            if self.is_sqlite:
                with conn.begin():
                    yield conn
                return
            with statements.autocommit(conn), conn.begin():
                yield conn

    @contextmanager
    def write(self, *, unlocked: bool = False) -> Iterator[sa.Connection]:
        """A write transaction: committed on success, rolled back on any exception.

        Inside this thread's open `TransactionGroup` it is a SAVEPOINT of the group's
        transaction instead, committed with the group. ``unlocked`` (PostgreSQL): an
        attempt without a transaction on the server, which raises
        `statements.LocksNeeded` when the work needs one (see `statements`).
        """
        group = self._own_group()
        if group is not None:
            with group.savepoint() as conn:
                yield conn
            return
        if self.is_sqlite:
            with (
                self.lock,
                self._memory_guard(),
                self.engine.connect().execution_options(sqlite_immediate=True) as conn,
                conn.begin(),
            ):
                yield conn
        else:
            with self.engine.connect() as conn:
                statements.open_transaction(conn, unlocked=unlocked)
                try:
                    with conn.begin():
                        yield conn
                        statements.finish(conn)  # queued statements and COMMIT, one round trip
                finally:
                    statements.close_transaction(conn)

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
                return self.transact(plan.bind(work), attempts=attempts)
        if not self.is_sqlite and statements.announced():
            try:
                with self.write(unlocked=True) as conn:
                    return work(conn)
            except (statements.LocksNeeded, sa.exc.IntegrityError):
                pass  # nothing was written: run it again, locked
        group = self._own_group()
        for attempt in range(attempts):
            try:
                if group is not None:  # `write`'s savepoint, without two generators
                    return group.run(work)
                with self.write() as conn:
                    return work(conn)
            except sa.exc.IntegrityError:
                if attempt == attempts - 1:
                    raise
            except sa.exc.OperationalError as exc:
                # PostgreSQL deadlock / serialization failure: safe to run again.
                code = getattr(exc.orig, "sqlstate", None)
                if code not in ("40001", "40P01") or attempt == attempts - 1:
                    raise
        raise AssertionError("unreachable")

    def get_meta(self, conn: sa.Connection, key: str) -> str | None:
        """A value of the ``meta`` table."""
        return conn.execute(sa.select(meta.c.value).where(meta.c.key == key)).scalar_one_or_none()


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
