"""Per-API-key token buckets: ``rate`` requests a second sustained, ``burst`` at once.

A merchant's own limit (set by ``POST /sandbox/rate-limit``) is a row of the
``rate_limits`` table, read with the API key, so every worker applies the same one;
without a row the sandbox's configured default applies. The buckets themselves live
in this process (`RateLimiter`, for an SQLite sandbox, which is one process) or in the
database (`SharedRateLimiter`, for PostgreSQL, where several workers count together).
"""

from __future__ import annotations

import math
import threading
import time
from dataclasses import dataclass

from workbench.sandbox.keys import Limit

__all__ = ["Limit", "RateLimiter"]


@dataclass(slots=True)
class _Bucket:
    tokens: float
    updated: float


class RateLimiter:
    """Token buckets per (merchant, key), kept in this process.

    Args:
        rate: the default tokens added per second; 0 turns limiting off.
        burst: the default bucket capacity.
    """

    #: Whether `check` reads the database (then call it from a worker thread).
    shared = False

    def __init__(self, rate: float, burst: int) -> None:
        self.rate = rate
        self.burst = burst
        self._buckets: dict[tuple[str, str], _Bucket] = {}
        self._lock = threading.Lock()

    def limit_for(self, own: Limit | None) -> Limit:
        """The merchant's own limit, or the configured default."""
        return own if own is not None else (self.rate, self.burst)

    def check(self, merchant_id: str, api_key: str, own: Limit | None = None) -> float | None:
        """Take one token; ``None`` when allowed, else the seconds to wait (Retry-After).

        Args:
            merchant_id: the caller's merchant.
            api_key: the key it signed with.
            own: the merchant's own limit (``None``: the default).
        """
        rate, burst = self.limit_for(own)
        if rate <= 0:
            return None
        now = time.monotonic()
        key = (merchant_id, api_key)
        with self._lock:
            bucket = self._buckets.get(key)
            if bucket is None:
                bucket = self._buckets[key] = _Bucket(float(burst), now)
            bucket.tokens = min(float(burst), bucket.tokens + (now - bucket.updated) * rate)
            bucket.updated = now
            if bucket.tokens >= 1:
                bucket.tokens -= 1
                return None
            return max((1 - bucket.tokens) / rate, 0.001)

    def forget(self, merchant_id: str) -> None:
        """Drop the merchant's buckets (its limit changed): they start full again."""
        with self._lock:
            self._buckets = {k: v for k, v in self._buckets.items() if k[0] != merchant_id}

    @staticmethod
    def retry_after(seconds: float) -> str:
        """Retry-After header value: whole seconds, at least 1."""
        return str(max(1, math.ceil(seconds)))
