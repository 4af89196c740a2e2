"""Per-API-key token buckets: ``rate`` requests a second sustained, ``burst`` at once.

A merchant's own limit (set by ``POST /sandbox/rate-limit``) is a row of the
``rate_limits`` table, read with the API key, so every worker applies the same one;
without a row the sandbox's configured default applies. The buckets themselves live
in this process (`RateLimiter`, for an SQLite sandbox, which is one process) or in the
database (`SharedRateLimiter`, for PostgreSQL, where several workers count together).
The middleware `KeyRateLimit` takes a token for each signed request.
"""

from __future__ import annotations

import functools
import math
import threading
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

import sqlalchemy as sa
from starlette.types import ASGIApp, Receive, Scope, Send

from workbench.sandbox.edge.gates import gated, refuse
from workbench.sandbox.keys import Limit

if TYPE_CHECKING:
    from workbench.sandbox.storage import Database

__all__ = ["SWEEP_INTERVAL", "KeyLimits", "KeyRateLimit", "Limit", "RateLimiter"]


@dataclass(slots=True)
class _Bucket:
    tokens: float
    updated: float
    full_at: float = 0.0  # when it will have refilled: from then on, as good as absent


#: Seconds between two sweeps of the refilled buckets kept in a process.
SWEEP_INTERVAL = 60.0


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
        self._next_sweep = 0.0

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
            if now >= self._next_sweep:
                self._sweep(now)
            bucket = self._buckets.get(key)
            if bucket is None:
                bucket = self._buckets[key] = _Bucket(float(burst), now)
            bucket.tokens = min(float(burst), bucket.tokens + (now - bucket.updated) * rate)
            bucket.updated = now
            if bucket.tokens >= 1:
                bucket.tokens -= 1
                wait = None
            else:
                wait = max((1 - bucket.tokens) / rate, 0.001)
            bucket.full_at = now + (burst - bucket.tokens) / rate
            return wait

    def _sweep(self, now: float) -> None:
        # A refilled bucket answers as a missing one would: forget it, so that one bucket
        # per client address ever seen does not stay in memory (hold the lock).
        self._next_sweep = now + SWEEP_INTERVAL
        self._buckets = {k: b for k, b in self._buckets.items() if b.full_at > now}

    def __len__(self) -> int:
        """How many buckets the process keeps (those not refilled at the last sweep)."""
        return len(self._buckets)

    def forget(self, merchant_id: str) -> None:
        """Drop the merchant's buckets (its limit changed): they start full again."""
        with self._lock:
            self._buckets = {k: v for k, v in self._buckets.items() if k[0] != merchant_id}

    @staticmethod
    def retry_after(seconds: float) -> str:
        """Retry-After header value: whole seconds, at least 1."""
        return str(max(1, math.ceil(seconds)))


class KeyLimits(Protocol):
    """What `KeyRateLimit` uses of the running sandbox, which exists once it has started."""

    @property
    def db(self) -> Database:
        """The sandbox database (a shared limiter's buckets are rows)."""
        ...

    @property
    def limiter(self) -> RateLimiter:
        """The per-key rate limiter."""
        ...


class KeyRateLimit:
    """Take a token for the signed request's key; 429 SVC-GW-1004 with Retry-After when none.

    Counts signed requests outside the ``/sandbox/`` controls, under the merchant's own
    limit (`KeyRecord.rate_limit`) or the configured default. A caller authenticated on
    a guessed key record (PostgreSQL) is never refused on it: `StaleKey` sends the
    request back to be authenticated afresh, and this layer, met again, takes no second
    token under the same limit (`RequestState.rate_token_taken`); only a limit the fresh
    record changed is applied again.

    Args:
        app: the wrapped application.
        sandbox: the running sandbox's database and limiter.
    """

    def __init__(self, app: ASGIApp, sandbox: KeyLimits) -> None:
        self.app = app
        self.sandbox = sandbox

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        found = gated(scope)
        if found is None:
            await self.app(scope, receive, send)
            return
        state, record = found
        limiter = self.sandbox.limiter
        wait: float | None = None
        limit = limiter.limit_for(record.rate_limit)
        if limit[0] > 0 and state.rate_token_taken != limit:
            check = functools.partial(
                limiter.check, record.merchant_id, record.api_key, record.rate_limit
            )
            try:
                wait = await self.sandbox.db.in_thread(check) if limiter.shared else check()
            except sa.exc.IntegrityError:
                # A shared bucket's row names its merchant: one deleted since its key was
                # kept (PostgreSQL) has none. Confirming the guess sends the request back
                # to be authenticated afresh (StaleKey), where the key is refused.
                caller = state.caller
                if caller is not None and caller.unconfirmed:
                    await caller.confirm_now(self.sandbox.db)
                raise
            state.rate_token_taken = limit if wait is None else None
        if wait is not None:
            retry = {"Retry-After": limiter.retry_after(wait)}
            message = "rate limit exceeded for this API key"
            await refuse(state, "SVC-GW-1004", message, retry, scope, receive, send)
            return
        await self.app(scope, receive, send)
