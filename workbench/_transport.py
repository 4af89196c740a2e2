"""An async transport that spreads requests over several connection pools.

The async pool of httpcore2 (as httpcore's before it) does work proportional to the
requests and connections it holds on every request it assigns, so one pool with 50
requests in flight spends several milliseconds of CPU per request (measured with
httpcore 1.0: ~4.7 ms at 50 in flight against ~0.9 ms at 1). Round-robin over a few
smaller pools keeps each one short (~1.2 ms at 50 in flight over 8 pools) without
changing what goes on the wire.

Every pool of every client, each webhook delivery batch of the sandbox and each buyer flow
verify servers with one SSL context (`default_ssl_context`): loading the certificate
store took about 17 ms per pool, so 130 ms per `AsyncClient`.
"""

from __future__ import annotations

import functools
import itertools
import ssl
from collections.abc import Sequence

import httpx2

__all__ = ["ShardedAsyncTransport", "default_ssl_context"]


@functools.cache
def default_ssl_context() -> ssl.SSLContext:
    """The context this process verifies servers with, built on first use.

    httpx2's own default (``SSL_CERT_FILE`` / ``SSL_CERT_DIR`` as set when the first
    client is made, else the system's certificate store), with hostname checks and
    certificates required. Nothing changes it after it is built, so clients and threads share it.
    """
    return httpx2.create_ssl_context()


class ShardedAsyncTransport(httpx2.AsyncBaseTransport):
    """Hands each request to the next of several transports, in turn.

    Args:
        shards: the transports (each with its own connection pool).
    """

    def __init__(self, shards: Sequence[httpx2.AsyncBaseTransport]) -> None:
        if not shards:
            raise ValueError("at least one transport is needed")
        self._shards = tuple(shards)
        self._next = itertools.cycle(self._shards)

    @classmethod
    def pools(cls, count: int, limits: httpx2.Limits) -> ShardedAsyncTransport:
        """``count`` HTTP transports sharing ``limits`` (at least one connection each)."""
        per_pool = httpx2.Limits(
            max_connections=_share(limits.max_connections, count),
            max_keepalive_connections=_share(limits.max_keepalive_connections, count),
            keepalive_expiry=limits.keepalive_expiry,
        )
        verify = default_ssl_context()
        return cls(
            [httpx2.AsyncHTTPTransport(verify=verify, limits=per_pool) for _ in range(count)]
        )

    @property
    def shards(self) -> tuple[httpx2.AsyncBaseTransport, ...]:
        """The transports requests are spread over."""
        return self._shards

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        return await next(self._next).handle_async_request(request)

    async def aclose(self) -> None:
        for shard in self._shards:
            await shard.aclose()


def _share(total: int | None, count: int) -> int | None:
    return None if total is None else max(1, -(-total // count))
