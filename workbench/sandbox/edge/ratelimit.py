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

from workbench.sandbox.edge.gates import gated, refusal_standing
from workbench.sandbox.errors import error_response
from workbench.sandbox.keys import Limit

if TYPE_CHECKING:
    from workbench.sandbox.context import Refusal, RequestState
    from workbench.sandbox.keys import KeyRecord
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
    a guessed key record (PostgreSQL) is never refused on it (`gates.refusal_standing`);
    should the guess prove stale, this layer is asked again with the fresh record, and
    takes a second token only under a limit the fresh record changed
    (`RequestState.rate_token_taken`).

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
        state, record, guess = found
        if guess is not None:
            guess.rechecks.append(functools.partial(self._take, state))
        refusal = await self._take(state, record)
        if refusal is not None:
            refusal = await refusal_standing(state, refusal, self.sandbox.db)
        if refusal is not None:
            code, message, headers = refusal
            await error_response(code, message, state.request_id, headers)(scope, receive, send)
            return
        await self.app(scope, receive, send)

    async def _take(self, state: RequestState, record: KeyRecord | None) -> Refusal | None:
        """A token under ``record``'s limit, unless one was taken under it already; the
        refusal when there is none."""
        if record is None:  # the key is gone (asked again after a stale guess)
            return None  # the signature's own check, asked first, refused it
        limiter = self.sandbox.limiter
        limit = limiter.limit_for(record.rate_limit)
        if limit[0] <= 0 or state.rate_token_taken == limit:
            return None
        check = functools.partial(
            limiter.check, record.merchant_id, record.api_key, record.rate_limit
        )
        try:
            wait = await self.sandbox.db.in_thread(check) if limiter.shared else check()
        except sa.exc.IntegrityError:
            # A shared bucket's row names its merchant: one deleted since its key was
            # read has none, and neither has the key.
            return "SVC-GW-1003", "X-Api-Key is not a key of this environment", None
        if wait is None:
            state.rate_token_taken = limit
            return None
        retry = {"Retry-After": limiter.retry_after(wait)}
        return "SVC-GW-1004", "rate limit exceeded for this API key", retry
