"""`SharedRateLimiter`: token buckets in the database, counted by every worker together.

A bucket is a row of ``rate_buckets``, one per key and limit, taken from by
`workbench.sandbox.storage.take_token` (one autocommit statement on PostgreSQL, a short
transaction on SQLite).
"""

from __future__ import annotations

import hashlib
from datetime import timedelta

import sqlalchemy as sa

from workbench.sandbox import tables
from workbench.sandbox.clock import wall_now
from workbench.sandbox.edge.ratelimit import Limit, RateLimiter
from workbench.sandbox.storage import Database, take_token

__all__ = ["SharedRateLimiter", "forget_full_buckets", "wait_for_token"]

_B = tables.rate_buckets


def _bucket_of(api_key: str, rate: float, burst: int) -> str:
    """The bucket of one key under one limit: a limit that changes starts a full bucket.

    Another worker may still hold the key's record as it was (a guess, PostgreSQL) and
    take under the old limit until its transaction finds out; those takes drain the old
    limit's bucket, not the one the new limit counts in.
    """
    name = f"{api_key} {rate!r}/{burst}"
    if len(name) > _B.c.api_key.type.length:  # type: ignore[attr-defined]
        name = "sha256:" + hashlib.sha256(name.encode()).hexdigest()
    return name


def forget_full_buckets(db: Database, table: sa.Table, rate: float, burst: int) -> int:
    """Delete the bucket rows of ``table`` that have refilled; the number deleted.

    A bucket last taken from ``burst / rate`` seconds ago or more is full again, and a
    missing bucket is made full on its next take: deleting it changes no answer. Every
    row of ``table`` must count under the one limit ``rate``/``burst`` (above 0).
    """
    cutoff = wall_now() - timedelta(seconds=burst / rate)
    with db.write() as conn:
        return int(conn.execute(sa.delete(table).where(table.c.updated_at <= cutoff)).rowcount)


def wait_for_token(
    db: Database, table: sa.Table, key: dict[str, str], rate: float, burst: int
) -> float | None:
    """Take one token from the bucket row ``key`` of ``table``: ``None``, or seconds to wait.

    ``rate`` is above 0 (a limit of 0 takes nothing and is checked by the caller).
    """
    tokens = take_token(db, table, key, rate, burst, wall_now)
    if tokens >= 1:
        return None
    return max((1 - tokens) / rate, 0.001)


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
        key = {"merchant_id": merchant_id, "api_key": _bucket_of(api_key, rate, burst)}
        return wait_for_token(self.db, _B, key, rate, burst)

    def forget(self, merchant_id: str) -> None:
        """Delete the merchant's buckets (its limit changed): they start full again."""
        with self.db.write() as conn:
            conn.execute(sa.delete(_B).where(_B.c.merchant_id == merchant_id))
