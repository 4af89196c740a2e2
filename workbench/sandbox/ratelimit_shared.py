"""`SharedRateLimiter`: token buckets in the database, counted by every worker together.

On PostgreSQL a token is taken by one statement in autocommit mode (one round trip, the
row locked for that statement only): a charge's bucket is the first thing it waits on,
and a transaction of three round trips doubled what a charge spent talking to the server.
"""

from __future__ import annotations

from collections.abc import Callable

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql

from workbench.sandbox import tables
from workbench.sandbox.clock import wall_now
from workbench.sandbox.ratelimit import Limit, RateLimiter
from workbench.sandbox.storage import Database, UTCDateTime, statements

__all__ = ["SharedRateLimiter"]

_B = tables.rate_buckets

# The bucket's tokens before this take (refilled for the time since its last take), with
# one token taken when there was one; the FOR UPDATE read waits for a concurrent take and
# sees its result. No row: nothing comes back (the bucket is created full, then taken from).
_TAKE_PG = sa.text(
    """
    WITH old AS (
        SELECT tokens, updated_at FROM rate_buckets
        WHERE merchant_id = :merchant_id AND api_key = :api_key
        FOR UPDATE
    ), refilled AS (
        SELECT LEAST(
            CAST(:burst AS double precision),
            old.tokens
            + GREATEST(EXTRACT(EPOCH FROM (:now - old.updated_at)), 0) * :rate
        ) AS tokens
        FROM old
    )
    UPDATE rate_buckets
    SET tokens = CASE WHEN refilled.tokens >= 1 THEN refilled.tokens - 1
                      ELSE refilled.tokens END,
        updated_at = :now
    FROM refilled
    WHERE merchant_id = :merchant_id AND api_key = :api_key
    RETURNING refilled.tokens
    """
).bindparams(
    sa.bindparam("now", type_=UTCDateTime()),
    sa.bindparam("rate", type_=sa.Float()),
    sa.bindparam("burst", type_=sa.Float()),
)


class SharedRateLimiter(RateLimiter):
    """`RateLimiter` whose buckets are rows of ``rate_buckets``, locked while taken from.

    Each check is one statement (PostgreSQL) or one short transaction (SQLite); run it
    from a worker thread.

    Args:
        db: the sandbox's database.
        rate: the default tokens added per second; 0 turns limiting off.
        burst: the default bucket capacity.
    """

    shared = True

    def __init__(self, db: Database, rate: float, burst: int) -> None:
        super().__init__(rate, burst)
        self.db = db

    def check(self, merchant_id: str, api_key: str, own: Limit | None = None) -> float | None:
        """Take one token from the shared bucket (see `RateLimiter.check`)."""
        rate, burst = self.limit_for(own)
        if rate <= 0:
            return None
        tokens = (
            self.db.transact(self._taker(merchant_id, api_key, rate, burst))
            if self.db.is_sqlite
            else self._take(merchant_id, api_key, rate, burst)
        )
        if tokens >= 1:
            return None
        return max((1 - tokens) / rate, 0.001)

    def _take(self, merchant_id: str, api_key: str, rate: float, burst: int) -> float:
        """PostgreSQL: one token in one autocommit statement; the tokens there were."""
        params = {"merchant_id": merchant_id, "api_key": api_key, "rate": rate, "burst": burst}
        with self.db.engine.connect() as conn, statements.autocommit(conn):
            while True:
                tokens = conn.execute(_TAKE_PG, {**params, "now": wall_now()}).scalar()
                if tokens is not None:
                    return float(tokens)
                first = {"tokens": float(burst), "updated_at": wall_now()}
                conn.execute(
                    postgresql.insert(_B)
                    .values(merchant_id=merchant_id, api_key=api_key, **first)
                    .on_conflict_do_nothing()
                )

    @staticmethod
    def _taker(
        merchant_id: str, api_key: str, rate: float, burst: int
    ) -> Callable[[sa.Connection], float]:
        """SQLite (workers on one file): the take as a transaction under the write lock."""
        where = (_B.c.merchant_id == merchant_id, _B.c.api_key == api_key)

        def take(conn: sa.Connection) -> float:
            now = wall_now()
            row = conn.execute(
                sa.select(_B.c.tokens, _B.c.updated_at).where(*where).with_for_update()
            ).first()
            if row is None:
                tokens = float(burst)
            else:
                elapsed = max((now - row.updated_at).total_seconds(), 0.0)
                tokens = min(float(burst), float(row.tokens) + elapsed * rate)
            remaining = tokens - 1 if tokens >= 1 else tokens
            if row is None:  # two workers inserting at once: the loser runs again
                conn.execute(
                    sa.insert(_B).values(
                        merchant_id=merchant_id, api_key=api_key, tokens=remaining, updated_at=now
                    )
                )
            else:
                conn.execute(sa.update(_B).where(*where).values(tokens=remaining, updated_at=now))
            return tokens

        return take

    def forget(self, merchant_id: str) -> None:
        """Delete the merchant's buckets (its limit changed): they start full again."""
        with self.db.write() as conn:
            conn.execute(sa.delete(_B).where(_B.c.merchant_id == merchant_id))
