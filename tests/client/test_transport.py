"""The AsyncClient's transport spreads requests over several pools, in turn."""

from __future__ import annotations

import asyncio

import httpx
import pytest

from tests.client import samples
from workbench._base_client import ASYNC_POOLS, DEFAULT_LIMITS
from workbench._client import AsyncClient
from workbench._transport import ShardedAsyncTransport


def test_requests_go_round_robin_and_close_closes_every_pool() -> None:
    seen: list[int] = []
    closed: list[int] = []

    class Shard(httpx.MockTransport):
        def __init__(self, index: int) -> None:
            super().__init__(
                lambda request: (seen.append(index), httpx.Response(200, json=samples.PAYMENT))[1]
            )
            self.index = index

        async def aclose(self) -> None:
            closed.append(self.index)

    async def run() -> None:
        transport = ShardedAsyncTransport([Shard(i) for i in range(3)])
        async with AsyncClient(
            "pk_test_a_0000", "sk_test_b_0000", "http://t", transport=transport
        ) as c:
            for _ in range(7):
                await c.payments.retrieve("pay_1")

    asyncio.run(run())
    assert seen == [0, 1, 2, 0, 1, 2, 0]
    assert sorted(closed) == [0, 1, 2]


def test_pools_share_the_limits() -> None:
    transport = ShardedAsyncTransport.pools(
        8, httpx.Limits(max_connections=100, max_keepalive_connections=20)
    )
    assert len(transport.shards) == 8
    pool = transport.shards[0]._pool  # type: ignore[attr-defined]
    assert pool._max_connections == 13
    assert pool._max_keepalive_connections == 3


def test_async_client_uses_sharded_pools_by_default() -> None:
    async def run() -> httpx.AsyncBaseTransport:
        async with AsyncClient("pk_test_a_0000", "sk_test_b_0000", "http://t") as c:
            return c._http._transport

    transport = asyncio.run(run())
    assert isinstance(transport, ShardedAsyncTransport)
    assert len(transport.shards) == ASYNC_POOLS
    assert DEFAULT_LIMITS.max_connections == 100


def test_no_shards_is_refused() -> None:
    with pytest.raises(ValueError, match="at least one"):
        ShardedAsyncTransport([])
