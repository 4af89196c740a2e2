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

An httpx2 client given its own transport ignores ``HTTP_PROXY`` / ``HTTPS_PROXY`` /
``ALL_PROXY`` / ``NO_PROXY``, so `proxy_routes` reads them as httpx2 does and the
`AsyncClient` mounts sharded pools through each proxy itself (`ShardedAsyncTransport.pools`
with ``proxy``).
"""

from __future__ import annotations

import functools
import itertools
import ssl
from collections.abc import Sequence

import httpx2
from httpx2._utils import get_environment_proxies

__all__ = ["ProxySetting", "ShardedAsyncTransport", "default_ssl_context", "proxy_routes"]

#: A proxy as the clients take it: its URL (``"http://proxy.internal:3128"``) or an
#: `httpx2.Proxy` (with its own credentials, headers or SSL context).
ProxySetting = str | httpx2.URL | httpx2.Proxy


@functools.cache
def default_ssl_context() -> ssl.SSLContext:
    """The context this process verifies servers with, built on first use.

    httpx2's own default (``SSL_CERT_FILE`` / ``SSL_CERT_DIR`` as set when the first
    client is made, else the system's certificate store), with hostname checks and
    certificates required. Nothing changes it after it is built, so clients and threads share it.
    """
    return httpx2.create_ssl_context()


def proxy_routes(proxy: ProxySetting | None) -> dict[str, httpx2.Proxy | None]:
    """Which proxy each address goes through, as URL patterns of httpx2's ``mounts``.

    Args:
        proxy: one proxy for every address; ``None`` reads ``HTTP_PROXY``,
            ``HTTPS_PROXY``, ``ALL_PROXY`` and ``NO_PROXY`` (any case) as `httpx2.Client`
            does, an address that ``NO_PROXY`` names mapping to ``None`` (no proxy).

    Returns:
        The patterns (``"https://"``, ``"all://*example.com"``...) and their proxies.
    """
    if proxy is not None:
        return {"all://": proxy if isinstance(proxy, httpx2.Proxy) else httpx2.Proxy(proxy)}
    # httpx2's own reading of the environment (its clients use the same function), so that
    # NO_PROXY's forms (domains, "*.", IP ranges, ports, "*") mean what they mean to it.
    return {
        pattern: None if url is None else httpx2.Proxy(url)
        for pattern, url in get_environment_proxies().items()
    }


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
    def pools(
        cls, count: int, limits: httpx2.Limits, *, proxy: httpx2.Proxy | None = None
    ) -> ShardedAsyncTransport:
        """``count`` HTTP transports sharing ``limits`` (at least one connection each).

        Args:
            count: how many pools.
            limits: the connection limits of all of them together.
            proxy: the proxy every pool connects through (default: none).
        """
        per_pool = httpx2.Limits(
            max_connections=_share(limits.max_connections, count),
            max_keepalive_connections=_share(limits.max_keepalive_connections, count),
            keepalive_expiry=limits.keepalive_expiry,
        )
        verify = default_ssl_context()
        return cls(
            [
                httpx2.AsyncHTTPTransport(verify=verify, limits=per_pool, proxy=proxy)
                for _ in range(count)
            ]
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
