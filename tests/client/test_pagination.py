"""Pagination: cursors passed on, limit respected, every item once, sync and async."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx2
import pandas as pd
import pytest

from tests.client import samples
from tests.client.fake_time import FakeTime
from tests.client.offline import make_async_client
from tests.client.script import Script
from workbench._client import Client

SUBS = [{**samples.LIST_ITEM, "id": f"sub_{i}", "amountMinor": 1000 + i} for i in range(5)]


def _pages(request: httpx2.Request) -> httpx2.Response:
    limit = int(request.url.params.get("limit", "2"))
    start = int(request.url.params.get("cursor", "0") or 0)
    items = SUBS[start : start + limit]
    nxt = str(start + limit) if start + limit < len(SUBS) else None
    return httpx2.Response(200, json={"items": items, "nextCursor": nxt})


@pytest.fixture
def paged(script: Script) -> Script:
    script.replies = [_pages]
    return script


def _params(script: Script) -> list[dict[str, Any]]:
    return [dict(r.url.params) for r in script.requests]


def test_iterates_every_page_passing_the_cursor(client: Client, paged: Script) -> None:
    ids = [s.id for s in client.subscriptions.list(status="active", limit=2)]
    assert ids == [s["id"] for s in SUBS]
    assert _params(paged) == [
        {"status": "active", "limit": "2"},
        {"status": "active", "limit": "2", "cursor": "2"},
        {"status": "active", "limit": "2", "cursor": "4"},
    ]


def test_pages_are_fetched_lazily(client: Client, paged: Script) -> None:
    pager = client.subscriptions.list(limit=2)
    assert paged.requests == []
    first = next(iter(pager))
    assert first.id == "sub_0"
    assert len(paged.requests) == 1


def test_max_items_stops_early(client: Client, paged: Script) -> None:
    subs = client.subscriptions.list(limit=2, max_items=3).to_list()
    assert [s.id for s in subs] == ["sub_0", "sub_1", "sub_2"]
    assert len(paged.requests) == 2


def test_pages_expose_the_cursor(client: Client, paged: Script) -> None:
    pages = list(client.subscriptions.list(limit=3).pages())
    assert [p.next_cursor for p in pages] == ["3", None]
    assert [len(p.items) for p in pages] == [3, 2]


def test_to_frame(client: Client, paged: Script) -> None:
    frame = client.subscriptions.list(limit=2).to_frame()
    assert isinstance(frame, pd.DataFrame)
    assert list(frame["id"]) == [s["id"] for s in SUBS]
    assert frame["amount_minor"].dtype == "Int64"
    assert frame.loc[0, "amount_minor_try"] == "10,00 TL"
    assert str(frame["next_charge_at"].dt.tz) == "UTC"


def test_invalid_limit_is_refused(client: Client) -> None:
    with pytest.raises(ValueError, match="limit"):
        client.subscriptions.list(limit=0)


def test_async_for_and_to_frame(script: Script, fake_time: FakeTime) -> None:
    script.replies = [_pages]

    async def run() -> tuple[list[str], pd.DataFrame]:
        async with make_async_client(script, fake_time) as c:
            ids = [s.id async for s in c.subscriptions.list(limit=2)]
            frame = await c.subscriptions.list(limit=4).to_frame()
            return ids, frame

    ids, frame = asyncio.run(run())
    assert ids == [s["id"] for s in SUBS]
    assert len(frame) == 5
    assert len(script.requests) == 3 + 2


def test_charge_list_to_frame(client: Client, script: Script) -> None:
    script.replies = [httpx2.Response(200, json=samples.CHARGES)]
    frame = client.subscriptions.charges("sub_1").to_frame()
    assert list(frame["payment_id"]) == ["pay_9"]
    assert frame.loc[0, "amount_minor_try"] == "99,00 TL"
