"""Write groups: one SQLite transaction shared by several writes, each in its own SAVEPOINT.

A commit writes the transaction's pages to the WAL, a few hundred microseconds on this
class of machine, as long as the rest of a card charge, so writes that arrive together
share one. `TransactionGroup` is the transaction and its savepoints; whoever opens one
holds the database's write lock, which the group hands back when it ends. `LoopWrites`
fills the event loop's groups.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

import sqlalchemy as sa

__all__ = ["TransactionGroup"]

T = TypeVar("T")


class TransactionGroup:
    """An open write transaction owned by one thread, shared by that thread's writes.

    Args:
        conn: the SQLite file database's write connection, not in a transaction; the
            caller holds the write lock.
        ended: called once the group has ended, committed or not: it releases the lock.
    """

    def __init__(self, conn: sa.Connection, ended: Callable[[TransactionGroup], None]) -> None:
        self.thread = threading.get_ident()
        self.conn = conn
        self._ended = ended
        #: Whether the group's transaction was committed (`finish`).
        self.committed = False
        self.conn.begin()
        self._names = itertools.count()
        #: The driver's connection, which the savepoints are issued on.
        self._raw: Any = self.conn.connection.driver_connection

    @contextmanager
    def savepoint(self) -> Iterator[sa.Connection]:
        """One member's writes: kept on success, undone alone on any exception.

        Issued on the driver connection (SQLAlchemy's ``begin_nested`` compiles both
        statements on every call, a tenth of a charge's time).
        """
        raw, name = self._open()
        try:
            yield self.conn
        except BaseException:
            _undo(raw, name)
            raise
        raw.execute(f"RELEASE {name}")

    def run(self, work: Callable[[sa.Connection], T]) -> T:
        """``work`` in a `savepoint`; its result (without a generator's cost per write)."""
        raw, name = self._open()
        try:
            result = work(self.conn)
        except BaseException:
            _undo(raw, name)
            raise
        raw.execute(f"RELEASE {name}")
        return result

    def _open(self) -> tuple[Any, str]:
        raw = self._raw
        name = f"member_{next(self._names)}"
        raw.execute(f"SAVEPOINT {name}")
        return raw, name

    def finish(self) -> sa.exc.SQLAlchemyError | None:
        """Commit (or, if that fails, roll back and return why), then release the lock."""
        try:
            self.conn.commit()
            self.committed = True
        except sa.exc.SQLAlchemyError as exc:
            self.conn.rollback()
            return exc
        finally:  # the write lock must be released whatever happened above
            self._ended(self)
        return None


def _undo(raw: Any, name: str) -> None:
    """Undo and forget the savepoint ``name``."""
    raw.execute(f"ROLLBACK TO {name}")
    raw.execute(f"RELEASE {name}")
