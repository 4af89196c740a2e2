"""An INSERT that does nothing when the row exists, said the same way on both backends."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa
from sqlalchemy.dialects import sqlite

if TYPE_CHECKING:
    from sqlalchemy.dialects import postgresql

__all__ = ["insert_if_absent"]


def insert_if_absent(
    conn: sa.Connection, table: sa.Table, values: Mapping[str, Any], *, key: Sequence[str]
) -> bool:
    """Insert a row unless one with the same ``key`` exists; whether this call made it.

    ``INSERT ... ON CONFLICT (key) DO NOTHING RETURNING key`` in the connection's own
    dialect: a row comes back only when this insert made it (a driver's rowcount is not
    reliable for it).

    Args:
        conn: a connection inside a write transaction.
        table: the table.
        values: the new row's columns.
        key: the columns of the unique index that decides whether the row exists.
    """
    if conn.dialect.name == "sqlite":
        start: sqlite.Insert | postgresql.Insert = sqlite.insert(table)
    else:
        from sqlalchemy.dialects import postgresql  # 20 ms of every start: only where used

        start = postgresql.insert(table)
    statement = (
        start.values(**values)
        .on_conflict_do_nothing(index_elements=list(key))
        .returning(*(table.c[name] for name in key))
    )
    return conn.execute(statement).first() is not None
