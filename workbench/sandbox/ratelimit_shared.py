"""`SharedRateLimiter`: token buckets in the database, counted by every worker together."""

from __future__ import annotations

import sqlalchemy as sa

from workbench.sandbox import db as tables
from workbench.sandbox.clock import wall_now
from workbench.sandbox.db import Database
from workbench.sandbox.ratelimit import Limit, RateLimiter

__all__ = ["SharedRateLimiter"]

_B = tables.rate_buckets


class SharedRateLimiter(RateLimiter):
    """`RateLimiter` whose buckets are rows of ``rate_buckets``, locked while taken from.

    Each check is one short transaction; run it from a worker thread.

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

        tokens = self.db.transact(take)
        if tokens >= 1:
            return None
        return max((1 - tokens) / rate, 0.001)

    def forget(self, merchant_id: str) -> None:
        """Delete the merchant's buckets (its limit changed): they start full again."""
        with self.db.write() as conn:
            conn.execute(sa.delete(_B).where(_B.c.merchant_id == merchant_id))
