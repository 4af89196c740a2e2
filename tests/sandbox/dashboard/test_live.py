"""The live lists: server-sent events of new rows, from every source registered."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterator

import httpx2
import pytest
import sqlalchemy as sa

from tests.sandbox.bodies import charge_under, txn
from workbench.sandbox import SandboxServer
from workbench.sandbox.dashboard.live import EventSource, LiveHub, LiveRow
from workbench.sandbox.dashboard.sessions import COOKIE
from workbench.sandbox.storage import Database


def _rows(lines: Iterator[str]) -> Iterator[dict]:
    """The rows of a stream, as they come."""
    for line in lines:
        if line.startswith("data: "):
            yield json.loads(line.removeprefix("data: "))


def test_a_new_event_is_pushed_to_the_merchants_stream(
    dashboard_server: SandboxServer, page: httpx2.Client, api: httpx2.Client
) -> None:
    cookies = {COOKIE: page.cookies[COOKIE]}
    base = dashboard_server.base_url
    with (
        httpx2.Client(base_url=base, cookies=cookies, timeout=20) as http,
        http.stream("GET", "/dashboard/live") as stream,
    ):
        assert stream.status_code == 200
        assert stream.headers["content-type"].startswith("text/event-stream")
        assert "connect-src 'self'" in stream.headers["content-security-policy"]
        lines = stream.iter_lines()
        assert next(lines) == "retry: 2000"  # the stream is open: what follows is new
        paid = api.post("/v1/payments/card", json=charge_under(txn(), 10_000)).json()
        row = next(_rows(lines))
    assert row["kind"] == "events"
    assert row["cells"][1] == "payment.captured"
    assert row["href"] == f"/dashboard/events/{row['cells'][0]}"
    shown = page.get(row["href"])
    assert paid["paymentId"] in shown.text


class _Numbers:
    """A source of the test's own: the rows it is given, by number."""

    kind = "numbers"

    def __init__(self) -> None:
        self.rows: list[int] = []

    def cursor(self, conn: sa.Connection, merchant_id: str) -> int:
        return len(self.rows)

    def since(
        self, conn: sa.Connection, merchant_id: str, cursor: int
    ) -> tuple[list[LiveRow], int]:
        new = self.rows[cursor:]
        return [LiveRow(f"/dashboard/n/{n}", (str(n),)) for n in new], len(self.rows)


def test_another_source_is_streamed_and_a_nudge_wakes_the_stream_at_once() -> None:
    db = Database("sqlite://")
    numbers = _Numbers()
    hub = LiveHub((EventSource(),), poll_seconds=60.0)  # no poll within the test
    hub.add(numbers)
    with pytest.raises(ValueError, match="registered already"):
        hub.add(_Numbers())

    async def run() -> list[str]:
        from workbench.sandbox.schema import TABLES
        from workbench.sandbox.storage.migrations import open_schema

        open_schema(db, TABLES)

        async def never_gone() -> bool:
            return False

        frames: list[str] = []
        stream = hub.stream(db, "mrc_x", never_gone)
        frames.append((await anext(stream)).decode())  # opened
        frames.append((await anext(stream)).decode())  # the first read: nothing new

        def write_then_nudge() -> None:
            numbers.rows.append(7)
            hub.nudge("mrc_x")

        threading.Thread(target=write_then_nudge).start()
        frames.append((await asyncio.wait_for(anext(stream), 5)).decode())
        hub.close()
        await stream.aclose()
        return frames

    frames = asyncio.run(run())
    db.dispose()
    assert frames[1] == ": idle\n\n"
    assert 'data: {"kind": "numbers", "href": "/dashboard/n/7", "cells": ["7"]}' in frames[2]
    assert "id: events=0,numbers=1" in frames[2]


def test_a_reconnecting_stream_carries_on_from_its_last_event_id() -> None:
    numbers = _Numbers()
    numbers.rows = [1, 2, 3]
    hub = LiveHub((numbers,), poll_seconds=60.0)
    db = Database("sqlite://")

    async def first_rows() -> str:
        async def never_gone() -> bool:
            return False

        stream = hub.stream(db, "mrc_x", never_gone, last_event_id="numbers=1")
        await anext(stream)
        frame = (await anext(stream)).decode()
        await stream.aclose()
        return frame

    frame = asyncio.run(first_rows())
    db.dispose()
    assert '"cells": ["2"]' in frame
    assert '"cells": ["3"]' in frame
    assert '"cells": ["1"]' not in frame
