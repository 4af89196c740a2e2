"""A per-API-key token bucket: ``rate`` requests a second sustained, ``burst`` at once."""

from __future__ import annotations

import math
import threading
import time
from dataclasses import dataclass

__all__ = ["RateLimiter"]


@dataclass(slots=True)
class _Bucket:
    tokens: float
    updated: float


class RateLimiter:
    """Token buckets per key, with per-merchant overrides set by a control route.

    Args:
        rate: tokens added per second; 0 turns limiting off.
        burst: bucket capacity.
    """

    def __init__(self, rate: float, burst: int) -> None:
        self.rate = rate
        self.burst = burst
        self._buckets: dict[str, _Bucket] = {}
        self._overrides: dict[str, tuple[float, int]] = {}
        self._lock = threading.Lock()

    def override(self, merchant_id: str, rate: float | None, burst: int | None) -> None:
        """Give one merchant its own limit (``None`` restores the default)."""
        with self._lock:
            if rate is None:
                self._overrides.pop(merchant_id, None)
            else:
                self._overrides[merchant_id] = (rate, burst if burst is not None else 1)
            self._buckets = {
                k: v for k, v in self._buckets.items() if not k.startswith(merchant_id + "\n")
            }

    def check(self, merchant_id: str, api_key: str) -> float | None:
        """Take one token; ``None`` when allowed, else the seconds to wait (Retry-After)."""
        rate, burst = self._overrides.get(merchant_id, (self.rate, self.burst))
        if rate <= 0:
            return None
        now = time.monotonic()
        key = f"{merchant_id}\n{api_key}"
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

    @staticmethod
    def retry_after(seconds: float) -> str:
        """Retry-After header value: whole seconds, at least 1."""
        return str(max(1, math.ceil(seconds)))
