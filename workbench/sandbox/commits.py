"""`CommitGroup`: one SQLite transaction shared by the writes the event loop runs in one turn.

A commit writes the transaction's pages to the WAL, a few hundred microseconds on this
class of machine, as long as the rest of a card charge. Writes run on the loop
(`Database.run`) join the group open in the current turn, each inside a SAVEPOINT so
an error rolls back its own work only; the group commits at the start of the next turn
and only then do the callers get their answers, so nothing is acknowledged before it
is durable. Meanwhile the loop thread holds the write lock: other threads' writes wait
for the commit, which is one loop turn away.
"""

from __future__ import annotations

import asyncio
import itertools
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

import sqlalchemy as sa

if TYPE_CHECKING:
    from workbench.sandbox.db import Database

__all__ = ["CommitGroup"]


class CommitGroup:
    """The open group: its connection, the thread that owns it, and the commit's outcome.

    Args:
        db: the SQLite file database; the caller holds its write lock, which the group
            releases when it ends.
    """

    def __init__(self, db: Database) -> None:
        loop = asyncio.get_running_loop()
        self.thread = threading.get_ident()
        self.conn = db.engine.connect().execution_options(sqlite_immediate=True)
        self._db = db
        try:
            self.conn.begin()
        except BaseException:
            self.conn.close()
            raise
        self.committed: asyncio.Future[None] = loop.create_future()
        self._names = itertools.count()
        loop.call_soon(self.close)

    @contextmanager
    def savepoint(self) -> Iterator[sa.Connection]:
        """One member's writes: kept on success, undone alone on any exception.

        Issued on the driver connection (SQLAlchemy's ``begin_nested`` compiles both
        statements on every call, a tenth of a charge's time).
        """
        raw = self.conn.connection.driver_connection
        assert raw is not None
        name = f"member_{next(self._names)}"
        raw.execute(f"SAVEPOINT {name}")
        try:
            yield self.conn
        except BaseException:
            raw.execute(f"ROLLBACK TO {name}")
            raw.execute(f"RELEASE {name}")
            raise
        raw.execute(f"RELEASE {name}")

    def close(self) -> None:
        """Commit (or, if that fails, roll back) and let the members answer."""
        try:
            self.conn.commit()
        except sa.exc.SQLAlchemyError as exc:
            self.conn.rollback()
            self.committed.set_exception(exc)
            self.committed.exception()  # a group whose members all failed has no reader
        else:
            self.committed.set_result(None)
        finally:
            try:
                self.conn.close()
            finally:  # the write lock must be released whatever happened above
                self._db.end_group(self)
