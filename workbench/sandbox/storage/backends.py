"""`Backend`: what SQLite and PostgreSQL do differently, behind one interface.

`workbench.sandbox.storage.database.Database` is what the services use; it holds one
backend (`workbench.sandbox.storage.sqlite.SQLiteBackend` or
`workbench.sandbox.storage.postgres.PostgresBackend`, chosen from the URL by
`open_backend`) and hands it every call that the two answer differently: how the engine
is made, how a read and a write transaction begin and end, where async work runs, how
a transaction is retried. The backends share nothing but this interface and
`retry_races`.
"""

from __future__ import annotations

import abc
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Any, TypeVar

import sqlalchemy as sa
from sqlalchemy.engine import make_url

from workbench.sandbox.storage.plans import ReadPlan

__all__ = ["Backend", "create_engine", "is_memory_url", "retry_races"]

T = TypeVar("T")


def create_engine(url: str, **kwargs: Any) -> sa.Engine:
    """`sqlalchemy.create_engine` with statement parameters kept out of every error.

    SQLAlchemy writes a failed statement's parameters into its exception's text, and so
    into any log or traceback that prints it: the demo key pair written at startup
    (secret key included), a renewal's transaction id. Every engine of the sandbox is
    made here, with ``hide_parameters=True``; the statement itself is still shown.
    """
    return sa.create_engine(url, hide_parameters=True, **kwargs)


def is_memory_url(url: str) -> bool:
    """Whether ``url`` names an in-memory SQLite database (one process's alone)."""
    parsed = make_url(url)
    return parsed.get_backend_name() == "sqlite" and parsed.database in (None, "", ":memory:")


def retry_races(
    once: Callable[[Callable[[sa.Connection], T]], T],
    work: Callable[[sa.Connection], T],
    attempts: int,
) -> T:
    """``once(work)``, run again when a concurrent insert won a race (or, on PostgreSQL,
    a deadlock or serialization failure ended it), ``attempts`` times at most.

    A unique-constraint violation means another request created the same object first;
    running ``work`` again lets it find that object and answer accordingly.
    """
    for attempt in range(attempts):
        try:
            return once(work)
        except sa.exc.IntegrityError:
            if attempt == attempts - 1:
                raise
        except sa.exc.OperationalError as exc:
            # PostgreSQL deadlock / serialization failure: safe to run again.
            code = getattr(exc.orig, "sqlstate", None)
            if code not in ("40001", "40P01") or attempt == attempts - 1:
                raise
    raise AssertionError("unreachable")


class Backend(abc.ABC):
    """One database server's way of running `Database`'s transactions.

    Attributes:
        engine: the SQLAlchemy engine.
        is_memory: an in-memory SQLite database (one process's alone).
        is_local: every process using the database runs on this machine (an SQLite file
            or an in-memory database), so they may coordinate through files beside it
            (`sidecar`); a server's database may be shared with processes anywhere.
    """

    engine: sa.Engine
    is_memory: bool = False
    is_local: bool = False

    def sidecar(self, name: str) -> str | None:
        """A file beside an SQLite database file, through which its processes coordinate."""
        del name
        return None

    @abc.abstractmethod
    def dispose(self) -> None:
        """Stop background work and close every pooled connection."""

    def start_checkpoints(self, interval: float) -> None:  # noqa: B027 - nothing by default
        """Start folding a write-ahead log into the database in the background, if any."""

    def stop_checkpoints(self) -> None:  # noqa: B027 - nothing by default
        """Stop `start_checkpoints`'s work and fold what is left."""

    def checkpoint(self, mode: str) -> None:  # noqa: B027 - nothing by default
        """Fold the write-ahead log into the database now (``PASSIVE`` or ``TRUNCATE``)."""

    @abc.abstractmethod
    def read(self) -> AbstractContextManager[sa.Connection]:
        """A read-only transaction."""

    @abc.abstractmethod
    def write(self, *, unlocked: bool = False) -> AbstractContextManager[sa.Connection]:
        """A write transaction: committed on success, rolled back on any exception."""

    @abc.abstractmethod
    def schema_transaction(self) -> AbstractContextManager[sa.Connection]:
        """One plain SQLAlchemy transaction for the schema's work, one process at a time."""

    @abc.abstractmethod
    def transact(self, work: Callable[[sa.Connection], T], attempts: int) -> T:
        """``work`` in a write transaction, retried on a lost insert race; its result."""

    @abc.abstractmethod
    async def run(self, work: Callable[[], T]) -> T:
        """Short synchronous database work (its own transactions) from async code."""

    @abc.abstractmethod
    async def atransact(self, work: Callable[[sa.Connection], T], plan: ReadPlan | None) -> T:
        """`transact` from async code; ``plan``: the reads ``work`` makes (already bound)."""

    @abc.abstractmethod
    async def aread(self, work: Callable[[sa.Connection], T]) -> T:
        """``work`` in a `read` transaction, from async code."""

    @abc.abstractmethod
    async def in_thread(self, work: Callable[[], T]) -> T:
        """Blocking database work from async code, in a worker thread."""
