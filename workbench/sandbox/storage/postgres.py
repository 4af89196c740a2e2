"""`PostgresBackend`: a PostgreSQL server, where every statement is a round trip.

On a small machine a round trip costs more than the statement; so a read
(`PostgresBackend.read`) runs its statements in autocommit mode (under READ COMMITTED a
multi-statement read transaction sees no more than they do), a pooled connection is
pinged only when it sat idle (`PING_AFTER_IDLE_SECONDS`), the pool is sized for the
number of worker processes sharing the server (`pool_settings`), and a write
transaction's statements travel together (`workbench.sandbox.storage.statements`: its
first statements with the ``BEGIN``, its last with the ``COMMIT``; or, announced and
unlocked, its reads as one statement and its INSERTs as another). Rows are locked with
``SELECT ... FOR UPDATE`` by the services. The work runs on threads of its own, and an
event loop's write transactions go to the server in batches (`LoopBatches`).
"""

from __future__ import annotations

import asyncio
import contextvars
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from typing import Any, TypeVar

import sqlalchemy as sa

from workbench.sandbox.storage import statements
from workbench.sandbox.storage.backends import Backend, create_engine, retry_races
from workbench.sandbox.storage.loopbatches import LoopBatches
from workbench.sandbox.storage.plans import ReadPlan

__all__ = ["PING_AFTER_IDLE_SECONDS", "PostgresBackend", "pool_settings"]

T = TypeVar("T")
#: A pooled PostgreSQL connection idle for longer than this is pinged before it is
#: handed out (and replaced if the server went away meanwhile, a restart say); one in
#: steady use is not, which saves a round trip per transaction.
PING_AFTER_IDLE_SECONDS = 0.25
#: Connections one process keeps open (as many as it had before this was per worker).
_POOL_KEPT = 10
#: Threads a process runs its PostgreSQL work on (`PostgresBackend.in_thread`). Fewer than
#: the connections it keeps: each thread wants the GIL back after every round trip, and
#: with ten of them a charge spent longer waiting for it than for the server (two
#: workers, signed charges: 1,216 req/s with 10 threads, 1,521 with 4, 1,577 with 2).
#: Four keep the work going while one or two wait on a row lock.
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
#: The advisory lock that serialises schema work across processes (`schema_transaction`).
_SCHEMA_LOCK = 0x5742_5343  # "WBSC"


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


class PostgresBackend(Backend):
    """A PostgreSQL database, shared by ``workers`` processes.

    Args:
        url: its SQLAlchemy URL.
        workers: processes serving this database (sizes the pool).
    """

    def __init__(self, url: str, *, workers: int) -> None:
        pool = pool_settings(workers, _server_max_connections(url))
        self.engine = create_engine(url, **pool, pool_use_lifo=True)  # idle ones stay idle
        # The work waits on the network: it runs on threads of its own (`in_thread`).
        self._threads = ThreadPoolExecutor(
            min(_PG_THREADS, pool["pool_size"]), thread_name_prefix="pg"
        )
        # Replaced when another loop writes (tests); the old one finishes on its own loop.
        self._batches: LoopBatches | None = None
        self._install_hooks()

    def _install_hooks(self) -> None:
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

    def dispose(self) -> None:
        self._threads.shutdown(wait=True)
        self.engine.dispose()

    # Transactions -----------------------------------------------------------------

    @contextmanager
    def read(self) -> Iterator[sa.Connection]:
        """Autocommit: no ``BEGIN`` and ``COMMIT`` round trips."""
        with self.engine.connect() as conn, statements.autocommit(conn), conn.begin():
            yield conn

    @contextmanager
    def write(self, *, unlocked: bool = False) -> Iterator[sa.Connection]:
        """``unlocked``: an attempt without a transaction on the server, which raises
        `statements.LocksNeeded` when the work needs one (see `statements`)."""
        with self.engine.connect() as conn:
            statements.open_transaction(conn, unlocked=unlocked)
            try:
                with conn.begin():
                    yield conn
                    statements.finish(conn)  # queued statements and COMMIT, one round trip
            finally:
                statements.close_transaction(conn)

    @contextmanager
    def schema_transaction(self) -> Iterator[sa.Connection]:
        """A plain transaction under an advisory lock held until it ends (`write` is
        tuned for short writes)."""
        with self.engine.connect() as conn, conn.begin():
            conn.execute(sa.select(sa.func.pg_advisory_xact_lock(_SCHEMA_LOCK)))
            yield conn

    def transact(self, work: Callable[[sa.Connection], T], attempts: int) -> T:
        """Work whose reads were announced is tried unlocked first (two statements, see
        `statements`), and run again locked when that attempt needs locks or loses an
        insert race."""
        if statements.announced():
            try:
                with self.write(unlocked=True) as conn:
                    return work(conn)
            except (statements.LocksNeeded, sa.exc.IntegrityError):
                pass  # nothing was written: run it again, locked
        return retry_races(self._once, work, attempts)

    def _once(self, work: Callable[[sa.Connection], T]) -> T:
        with self.write() as conn:
            return work(conn)

    # From async code ---------------------------------------------------------------

    async def run(self, work: Callable[[], T]) -> T:
        """On the database's threads (`in_thread`): it waits on the network."""
        return await self.in_thread(work)

    async def atransact(self, work: Callable[[sa.Connection], T], plan: ReadPlan | None) -> T:
        """With the other transactions this loop asks for meanwhile (`LoopBatches`):
        those with a ``plan`` of their reads share two round trips and one commit;
        others run one by one, as `transact` runs them, on the database's threads."""
        if plan is not None:
            with plan.announced():
                return await self._batched(work)
        return await self._batched(work)

    async def _batched(self, work: Callable[[sa.Connection], T]) -> T:
        loop = asyncio.get_running_loop()
        batches = self._batches
        if batches is None or batches.loop is not loop:
            batches = self._batches = LoopBatches(
                self.engine, self._transact, self._threads, _PG_BATCHES, loop
            )
        return await batches.run(work)

    def _transact(self, work: Callable[[sa.Connection], T]) -> T:
        return self.transact(work, 4)

    async def aread(self, work: Callable[[sa.Connection], T]) -> T:
        """On the database's threads: every statement waits on the network."""

        def run() -> T:
            with self.read() as conn:
                return work(conn)

        return await self.in_thread(run)

    async def in_thread(self, work: Callable[[], T]) -> T:
        """The database's own threads, handed the work through `asyncio`'s executor,
        which costs a charge a fraction of what anyio's thread pool does; the work sees
        the caller's context variables (a `ReadPlan` announced)."""
        context = contextvars.copy_context()
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._threads, context.run, work)
