"""`insert_later`: an INSERT nothing reads back, sent as late as allowed; the row it makes.

On PostgreSQL, inside a write transaction, the INSERT waits to travel with the next
statement or with the ``COMMIT`` (a constraint it breaks is raised from there, before
anything is committed; see `statements`); elsewhere it runs at once. Either way the
caller gets the row at once, as a read of it would show it (`row_like`), so the rest
of the transaction handles one kind of row whether it read it or made it.
"""

from __future__ import annotations

import collections
import threading
from collections.abc import Mapping
from typing import Any

import sqlalchemy as sa

from workbench.sandbox.storage import statements
from workbench.sandbox.storage.types import AnyRow

__all__ = ["insert_later", "insert_lock_row", "insert_unread", "row_like"]

#: Per table: the named tuple type of its rows, its column keys, each one's plain default.
_Shape = tuple[Any, tuple[str, ...], tuple[Any, ...]]
_shapes: dict[sa.Table, _Shape] = {}
_shapes_lock = threading.Lock()


def _shape(table: sa.Table) -> _Shape:
    """The named tuple type of ``table``'s rows, its column keys and their plain defaults."""
    shape = _shapes.get(table)
    if shape is None:
        columns = list(table.columns)
        keys = tuple(c.key for c in columns)
        record = collections.namedtuple("Record", keys, rename=True)  # type: ignore[misc]
        defaults = tuple(
            c.default.arg if c.default is not None and c.default.is_scalar else None  # type: ignore[attr-defined]
            for c in columns
        )
        with _shapes_lock:
            shape = _shapes.setdefault(table, (record, keys, defaults))
    return shape


def row_like(table: sa.Table, values: Mapping[str, Any]) -> AnyRow:
    """The row ``values`` make in ``table``, with the attributes a read of it has.

    A column not in ``values`` holds its plain default (``default=0``), else ``None``:
    what the database fills in itself (an autoincrement key) is not known here.
    """
    record, keys, defaults = _shape(table)
    # map() over the bound ``get`` builds the row in C: a charge makes several such rows
    # of thirty-odd columns, and a Python loop over the columns was a tenth of its work.
    row: AnyRow = tuple.__new__(record, map(values.get, keys, defaults))
    return row


def insert_later(conn: sa.Connection, statement: sa.Insert, values: Mapping[str, Any]) -> AnyRow:
    """Insert a row of ``values`` with ``statement`` (an ``INSERT`` of one table, built
    without ``.values()``), as late as allowed (see the module doc); the row, at once.

    Raises:
        sqlalchemy.exc.IntegrityError: the row breaks a constraint: here, or on
            PostgreSQL from the next statement or the commit.
    """
    statements.defer(conn, statement, values)
    table = statement.table
    assert isinstance(table, sa.Table)
    return row_like(table, values)


def insert_unread(conn: sa.Connection, statement: sa.Insert, values: Mapping[str, Any]) -> None:
    """`insert_later` for a row the transaction does not read back (an event, an
    idempotency record): the same INSERT, sent as late, without making the row.

    Raises:
        sqlalchemy.exc.IntegrityError: as `insert_later`.
    """
    statements.defer(conn, statement, values)


def insert_lock_row(conn: sa.Connection, statement: sa.Insert, values: Mapping[str, Any]) -> None:
    """`insert_unread` for a row whose only use is its key: two transactions that each
    read nothing under it both insert, and one meets the unique index and runs again.

    Only where writers run at once (PostgreSQL). SQLite's take turns (``BEGIN
    IMMEDIATE`` under the write lock, a group's transactions one after the other), so
    the reads before it already saw every earlier writer and the row would lock nothing:
    it is not written there (3.6% of a card charge's instructions).

    Raises:
        sqlalchemy.exc.IntegrityError: as `insert_later`.
    """
    if conn.dialect.name != "sqlite":
        statements.defer(conn, statement, values)
