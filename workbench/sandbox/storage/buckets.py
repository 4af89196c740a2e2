"""Token buckets kept as rows, taken from by every worker together, on either backend.

A bucket is a row of a table with ``tokens`` (float) and ``updated_at`` (`UTCDateTime`)
columns beside its key columns. `take_token` refills it for the time since its last
take, takes one token when there is one, and answers the tokens there were. On
PostgreSQL that is one statement in autocommit mode (one round trip, the row locked for
that statement only): a charge's bucket is the first thing it waits on, and a
transaction of three round trips doubled what a charge spent talking to the server. On
SQLite it is a short transaction under the write lock.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from datetime import datetime

import sqlalchemy as sa

from workbench.sandbox.storage import statements
from workbench.sandbox.storage.database import Database
from workbench.sandbox.storage.types import UTCDateTime

__all__ = ["take_token"]


@functools.cache
def _take_pg(table: sa.Table, key: tuple[str, ...]) -> sa.TextClause:
    """The bucket's tokens before this take (refilled for the time since its last take), with
    one token taken when there was one; the FOR UPDATE read waits for a concurrent take and
    sees its result. No row: nothing comes back (the bucket is created full, then taken from).
    """
    where = " AND ".join(f"{name} = :{name}" for name in key)
    return sa.text(
        f"""
    WITH old AS (
        SELECT tokens, updated_at FROM {table.name}
        WHERE {where}
        FOR UPDATE
    ), refilled AS (
        SELECT LEAST(
            CAST(:burst AS double precision),
            old.tokens
            + GREATEST(EXTRACT(EPOCH FROM (:now - old.updated_at)), 0) * :rate
        ) AS tokens
        FROM old
    )
    UPDATE {table.name}
    SET tokens = CASE WHEN refilled.tokens >= 1 THEN refilled.tokens - 1
                      ELSE refilled.tokens END,
        updated_at = :now
    FROM refilled
    WHERE {where}
    RETURNING refilled.tokens
    """  # noqa: S608 (names of our own Table, never a request's)
    ).bindparams(
        sa.bindparam("now", type_=UTCDateTime()),
        sa.bindparam("rate", type_=sa.Float()),
        sa.bindparam("burst", type_=sa.Float()),
    )


def take_token(
    db: Database,
    table: sa.Table,
    key: Mapping[str, str],
    rate: float,
    burst: int,
    now: Callable[[], datetime],
) -> float:
    """Take one token from the bucket ``key`` of ``table``; the tokens it held before.

    A bucket not yet there is created full, then taken from. Blocking: run it from a
    worker thread.

    Args:
        db: the database.
        table: the buckets' table.
        key: the bucket's key columns and their values.
        rate: tokens added per second.
        burst: the bucket's capacity.
        now: the clock the bucket refills by.
    """
    if db.is_sqlite:
        return db.transact(_taker(table, key, rate, burst, now))
    from sqlalchemy.dialects import postgresql  # 20 ms of every start: only where used

    params = {**key, "rate": rate, "burst": burst}
    statement = _take_pg(table, tuple(key))
    with db.engine.connect() as conn, statements.autocommit(conn):
        while True:
            tokens = conn.execute(statement, {**params, "now": now()}).scalar()
            if tokens is not None:
                return float(tokens)
            first = {"tokens": float(burst), "updated_at": now()}
            conn.execute(postgresql.insert(table).values(**key, **first).on_conflict_do_nothing())


def _taker(
    table: sa.Table, key: Mapping[str, str], rate: float, burst: int, now: Callable[[], datetime]
) -> Callable[[sa.Connection], float]:
    """SQLite (workers on one file): the take as a transaction under the write lock."""
    where = [table.c[name] == value for name, value in key.items()]
    tokens_c, updated_c = table.c.tokens, table.c.updated_at

    def take(conn: sa.Connection) -> float:
        at = now()
        row = conn.execute(sa.select(tokens_c, updated_c).where(*where).with_for_update()).first()
        if row is None:
            tokens = float(burst)
        else:
            elapsed = max((at - row.updated_at).total_seconds(), 0.0)
            tokens = min(float(burst), float(row.tokens) + elapsed * rate)
        remaining = tokens - 1 if tokens >= 1 else tokens
        if row is None:  # two workers inserting at once: the loser runs again
            conn.execute(sa.insert(table).values(**key, tokens=remaining, updated_at=at))
        else:
            conn.execute(sa.update(table).where(*where).values(tokens=remaining, updated_at=at))
        return tokens

    return take
