"""`KeyCache`: API key records kept between requests.

The cache empties itself when what it keeps changes (`KeyCache.watch`): a statement
that inserts, updates or deletes rows of a table the records are read from (a key, a
merchant's control switches: fail-next, latency, its rate limit, a reset) marks its
connection, and once that connection's transaction has ended, committed, the cache
is cleared. Writers need not remember it. Several processes serving one SQLite file
(``workbench sandbox --workers N``) share a stamp: eight bytes of a file beside the
database, mapped into each process's memory, which `KeyCache.clear` rewrites and every
lookup compares, so a change made through one process empties every cache before the
change's own answer is sent.

A PostgreSQL sandbox may run workers on other machines, which no stamp reaches, and
its rows may be changed by anyone: there a kept record is only a guess
(`KeyCache.confirm`). A request may act on one only if it reads the key's row again
inside its own transaction and gives up, to be authenticated afresh, when the row
differs (`workbench.sandbox.keys.confirm_key`), or if it reads the row before it
refuses anything; every other request reads the database.
"""

from __future__ import annotations

import mmap
import os
import threading
from collections.abc import Iterable
from typing import Any, Generic, Protocol, TypeVar

import sqlalchemy as sa

__all__ = ["KeyCache", "Keyed", "Stamp"]

#: What `KeyCache.stamp` returns: the local generation and the shared stamp.
Stamp = tuple[int, bytes]


class Keyed(Protocol):
    """A record kept by its public API key (`workbench.sandbox.edge.signature.KeyRecord`)."""

    @property
    def api_key(self) -> str:
        """The public key the record is kept under."""
        ...


R = TypeVar("R", bound=Keyed)
#: The mark a connection carries (in its pool record's ``info``) after it changed a
#: watched table, until it goes back to the pool.
_CHANGED = "workbench.keycache.changed"


class _SharedStamp:
    """Eight bytes of a file, mapped into memory: read per request, rewritten by a clear."""

    def __init__(self, path: str) -> None:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            if os.fstat(fd).st_size < 8:
                os.ftruncate(fd, 8)
            self._map = mmap.mmap(fd, 8)
        finally:
            os.close(fd)

    def read(self) -> bytes:
        return self._map[:8]

    def renew(self) -> bytes:
        # Random rather than counted, so two processes clearing at once still differ.
        value = os.urandom(8)
        self._map[:8] = value
        return value


class KeyCache(Generic[R]):
    """Known keys' records by their public value; unknown keys are never kept.

    Args:
        enabled: whether to keep anything at all.
        stamp_path: the file other processes serving the same database share its stamp
            through, or ``None`` when this process is the only one.
        confirm: whether a kept record may be out of date without this process knowing
            (PostgreSQL), so must be confirmed against the database before it counts.
    """

    def __init__(
        self, *, enabled: bool, stamp_path: str | None = None, confirm: bool = False
    ) -> None:
        self.enabled = enabled
        self.confirm = confirm
        self._records: dict[str, R] = {}
        self._lock = threading.Lock()
        self._generation = 0
        self._shared = _SharedStamp(stamp_path) if enabled and stamp_path else None
        self._seen = self._shared.read() if self._shared is not None else b""

    def stamp(self) -> Stamp:
        """Take before reading a record from the database; hand it to `put` with it."""
        return self._generation, self._shared.read() if self._shared is not None else b""

    def get(self, api_key: str) -> R | None:
        """The kept record, or ``None`` (take a `stamp`, look it up, then `put` it)."""
        if self._shared is not None:
            seen = self._shared.read()
            if seen != self._seen:  # another process changed something
                with self._lock:
                    self._records.clear()
                    self._generation += 1
                    self._seen = seen
        return self._records.get(api_key)

    def put(self, record: R, stamp: Stamp) -> None:
        """Keep a record read after ``stamp`` was taken, unless a clear came in between."""
        if self.enabled:
            with self._lock:
                if stamp == self.stamp():
                    self._records[record.api_key] = record

    def watch(self, engine: sa.Engine, tables: Iterable[sa.Table]) -> None:
        """Clear whenever a transaction of ``engine`` that changed ``tables`` has ended.

        A statement run through SQLAlchemy (``Connection.execute``) that inserts,
        updates or deletes rows of one of ``tables`` marks its connection; when the
        connection goes back to the pool, after its COMMIT (or its rollback: then the
        clear was not needed, and costs one lookup per key), the cache is cleared. Not
        before the commit: a request that read the row meanwhile would keep the old
        record. Statements of `workbench.sandbox.storage.statements` (the charge's) and textual SQL
        are not seen; none of them writes a key's tables.

        Args:
            engine: the database's engine.
            tables: the tables the kept records are read from.
        """
        watched = frozenset(tables)

        def noticed(conn: sa.Connection, statement: Any, *_args: Any) -> None:
            if isinstance(statement, sa.sql.dml.UpdateBase) and statement.table in watched:
                conn.info[_CHANGED] = True

        def returned(_dbapi_conn: Any, record: Any) -> None:
            if record.info.pop(_CHANGED, False):
                self.clear()

        sa.event.listen(engine, "after_execute", noticed)
        sa.event.listen(engine, "checkin", returned)

    def discard(self, api_key: str) -> None:
        """Forget one key's record (found out of date)."""
        with self._lock:
            self._records.pop(api_key, None)

    def clear(self) -> None:
        """Forget every record, in every process (`watch` calls it on a change)."""
        with self._lock:
            self._records.clear()
            self._generation += 1
            if self._shared is not None:
                self._seen = self._shared.renew()

    def __repr__(self) -> str:
        return (
            f"KeyCache(enabled={self.enabled}, shared={self._shared is not None}, "
            f"confirm={self.confirm}, size={len(self._records)})"
        )
