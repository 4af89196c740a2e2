"""`SharedRateLimiter`: token buckets in the database, counted by every worker together.

A bucket is a row of ``rate_buckets``, taken from by `workbench.sandbox.storage.take_token`
(one autocommit statement on PostgreSQL, a short transaction on SQLite).
"""

from __future__ import annotations

import sqlalchemy as sa

from workbench.sandbox import tables
from workbench.sandbox.clock import wall_now
from workbench.sandbox.ratelimit import Limit, RateLimiter
from workbench.sandbox.storage import Database, take_token

__all__ = ["SharedRateLimiter"]

_B = tables.rate_buckets


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
        key = {"merchant_id": merchant_id, "api_key": api_key}
        tokens = take_token(self.db, _B, key, rate, burst, wall_now)
        if tokens >= 1:
            return None
        return max((1 - tokens) / rate, 0.001)

    def forget(self, merchant_id: str) -> None:
        """Delete the merchant's buckets (its limit changed): they start full again."""
        with self.db.write() as conn:
            conn.execute(sa.delete(_B).where(_B.c.merchant_id == merchant_id))
