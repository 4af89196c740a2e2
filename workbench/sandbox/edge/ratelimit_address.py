"""`AddressRateLimit`: token buckets per client address on the routes that take no signature.

The buyer-facing routes (``GET /v1/payments/{id}/public-status``, the portal under
``/v1/public/``, the hosted pages under ``/checkout/``, the simulated ACS page under
``/sandbox/acs/``, the demo merchant's return page, the front page) and the making of
merchants (``/sandbox/merchants``) have no API key to count by; a caller there is
counted by the address it connects from (the peer of the TCP connection: a
forwarding header is anyone's to write). Past the limit the answer is 429
``SVC-GW-1004`` in the envelope, with ``Retry-After``. The path is read once made
canonical (`workbench.sandbox.edge.paths`): ``/public-status/`` is served as
``/public-status``, so it is counted as that.

The buckets live in this process (`RateLimiter`, a one-process SQLite sandbox) or in
the database's ``address_buckets`` table (`SharedAddressLimiter`), where several workers
count together, as the per-key buckets do (`workbench.sandbox.edge.ratelimit`).
"""

from __future__ import annotations

import hashlib
import re
from datetime import datetime, timedelta
from typing import Protocol

from starlette.types import ASGIApp, Receive, Scope, Send

from workbench.sandbox import tables
from workbench.sandbox.clock import wall_now
from workbench.sandbox.edge.ratelimit import Limit, RateLimiter
from workbench.sandbox.edge.ratelimit_shared import forget_full_buckets, wait_for_token
from workbench.sandbox.errors import error_response, request_id_of
from workbench.sandbox.storage import Database

__all__ = [
    "LIMITED_ROUTES",
    "PURGE_INTERVAL",
    "AddressLimits",
    "AddressRateLimit",
    "SharedAddressLimiter",
    "address_limiter",
]

#: The unauthenticated routes counted per address, matched on the canonical path (the
#: hosted pages' static files and the health check, which touch no database, are not).
LIMITED_ROUTES = re.compile(
    r"^/v1/payments/[^/]+/public-status$|^/v1/public/|^/checkout(?:/(?!static/)|$)"
    r"|^/sandbox/acs/|^/demo/merchant/return/*$|^/$|^/sandbox/merchants$"
)

_B = tables.address_buckets
#: The process-local limiter's key for every address (it keys by merchant and key).
_ANY = ""


#: Seconds of the wall clock between two purges of the refilled address buckets, per
#: process (`SharedAddressLimiter`).
PURGE_INTERVAL = 60.0


class SharedAddressLimiter(RateLimiter):
    """`RateLimiter` whose buckets are rows of ``address_buckets``; run it in a thread.

    Every address that ever asked has a row, so a take deletes, at most once every
    `PURGE_INTERVAL` seconds in each process, the rows that have refilled since their last
    take (`forget_full_buckets`): nothing a client would notice, and the table holds only
    the addresses seen within ``burst / rate`` seconds.

    Args:
        db: the sandbox's database.
        rate: tokens added per second; 0 turns limiting off.
        burst: the bucket capacity.
    """

    shared = True

    def __init__(self, db: Database, rate: float, burst: int) -> None:
        super().__init__(rate, burst)
        self.db = db
        self._next_purge: datetime | None = None

    def check(self, merchant_id: str, api_key: str, own: Limit | None = None) -> float | None:
        """Take one token from the bucket of the address ``api_key`` (see `RateLimiter`)."""
        rate, burst = self.limit_for(own)
        if rate <= 0:
            return None
        now = wall_now()
        if self._next_purge is None or now >= self._next_purge:
            self._next_purge = now + timedelta(seconds=PURGE_INTERVAL)
            forget_full_buckets(self.db, _B, rate, burst)
        address = api_key
        if len(address) > _B.c.address.type.length:  # type: ignore[attr-defined]
            address = "sha256:" + hashlib.sha256(address.encode()).hexdigest()[:48]
        return wait_for_token(self.db, _B, {"address": address}, rate, burst)


def address_limiter(db: Database, rate: float, burst: int, *, shared: bool) -> RateLimiter:
    """The per-address limiter: in the database when ``shared`` (several processes)."""
    return SharedAddressLimiter(db, rate, burst) if shared else RateLimiter(rate, burst)


class AddressLimits(Protocol):
    """What `AddressRateLimit` uses of the running sandbox, which exists once started."""

    @property
    def address_limiter(self) -> RateLimiter:
        """The per-address limiter."""
        ...


class AddressRateLimit:
    """Refuse, with 429 in the envelope, an address past its limit on `LIMITED_ROUTES`.

    Args:
        app: the wrapped application.
        limiter: returns the per-address limiter (the sandbox's, once it has started).
    """

    def __init__(self, app: ASGIApp, limiter: AddressLimits) -> None:
        self.app = app
        self.limiter = limiter

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not LIMITED_ROUTES.search(str(scope["path"])):
            await self.app(scope, receive, send)
            return
        limiter = self.limiter.address_limiter
        client = scope.get("client")
        address = str(client[0]) if client else "unknown"
        if limiter.rate > 0:
            if isinstance(limiter, SharedAddressLimiter):  # a database row: off the loop
                wait = await limiter.db.in_thread(lambda: limiter.check(_ANY, address))
            else:
                wait = limiter.check(_ANY, address)
            if wait is not None:
                message = "rate limit exceeded for this client address"
                retry = {"Retry-After": limiter.retry_after(wait)}
                response = error_response("SVC-GW-1004", message, request_id_of(scope), retry)
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)
