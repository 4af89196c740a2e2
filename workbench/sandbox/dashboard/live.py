"""The dashboard's live lists: new rows pushed to the browser by server-sent events.

A merchant's pages open one stream (``GET /dashboard/live``, `LiveHub.stream`); the few
lines of ``static/dashboard.js`` add each message as a row at the top of every table
marked ``data-live="<kind>"``, as ``stripe listen`` prints events in a terminal.

Where rows come from: **sources**, one per kind of row, each reading the database
(`LiveSource`), so a row written by any worker or host, the reconciler's thread
included, reaches every stream: a stream asks each source for what is newer than its
cursor about once a second, and at once when this process says something was written
(`LiveHub.nudge`).

**For the request log** (or any other list): write a `LiveSource` and register it
where the app is built (``live.add(RequestSource())`` beside ``EventSource()`` in
``workbench.sandbox.app``); after the request's row is written, call
``live.nudge(merchant_id)`` (thread-safe, cheap, optional: without it the row shows
within a second). A source's rows are `LiveRow`: the link of the row's page and its
cells as text, which the script writes as text (never as HTML); the page's table of
that kind has ``data-live="<kind>"`` and as many columns as the cells.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Protocol

import sqlalchemy as sa

from workbench.sandbox import tables
from workbench.sandbox.clock import iso
from workbench.sandbox.storage import Database

__all__ = ["EventSource", "LiveHub", "LiveRow", "LiveSource"]

#: Seconds between two reads of the sources when nothing nudged.
POLL_SECONDS = 1.0
#: A stream ends after this long; the browser's EventSource opens the next (and the
#: session is checked again then).
STREAM_SECONDS = 300.0
#: Rows a source hands over per read at most.
BATCH = 50


@dataclass(frozen=True, slots=True)
class LiveRow:
    """One row of a live list.

    Attributes:
        href: the row's page (its first cell links there).
        cells: the row's cells, as text.
    """

    href: str
    cells: tuple[str, ...]


class LiveSource(Protocol):
    """Where a kind of live row comes from (a table read by cursor)."""

    #: The ``data-live`` name of the tables showing these rows.
    kind: str

    def cursor(self, conn: sa.Connection, merchant_id: str) -> int:
        """Where a new stream starts: past everything written so far."""
        ...

    def since(
        self, conn: sa.Connection, merchant_id: str, cursor: int
    ) -> tuple[list[LiveRow], int]:
        """The merchant's rows past ``cursor`` (oldest first, `BATCH` at most), and the
        cursor past them."""
        ...


_E = tables.events


class EventSource:
    """The merchant's new events (``data-live="events"``): id, type, time, delivery."""

    kind = "events"

    def cursor(self, conn: sa.Connection, merchant_id: str) -> int:
        """The merchant's newest event's ``seq``."""
        found = conn.execute(
            sa.select(sa.func.max(_E.c.seq)).where(_E.c.merchant_id == merchant_id)
        ).scalar()
        return int(found or 0)

    def since(
        self, conn: sa.Connection, merchant_id: str, cursor: int
    ) -> tuple[list[LiveRow], int]:
        """Events past ``cursor``, oldest first."""
        rows = conn.execute(
            sa.select(_E.c.seq, _E.c.id, _E.c.type, _E.c.created_at, _E.c.delivery_state)
            .where(_E.c.merchant_id == merchant_id, _E.c.seq > cursor)
            .order_by(_E.c.seq)
            .limit(BATCH)
        ).all()
        found = [
            LiveRow(
                f"/dashboard/events/{r.id}",
                (str(r.id), str(r.type), iso(r.created_at) or "", str(r.delivery_state)),
            )
            for r in rows
        ]
        return found, int(rows[-1].seq) if rows else cursor


class LiveHub:
    """The live lists' streams and their sources.

    Args:
        sources: the kinds of rows streamed (more with `add`).
        poll_seconds: seconds between two reads when nothing nudged.
        stream_seconds: how long one stream lasts.
    """

    def __init__(
        self,
        sources: tuple[LiveSource, ...] = (),
        *,
        poll_seconds: float = POLL_SECONDS,
        stream_seconds: float = STREAM_SECONDS,
    ) -> None:
        self.sources: list[LiveSource] = list(sources)
        self.poll_seconds = poll_seconds
        self.stream_seconds = stream_seconds
        self._guard = threading.Lock()
        self._waiting: dict[str, list[tuple[asyncio.AbstractEventLoop, asyncio.Event]]] = {}
        self.closed = False

    def add(self, source: LiveSource) -> None:
        """Stream another kind of row (the composition root registers each)."""
        if any(s.kind == source.kind for s in self.sources):
            raise ValueError(f"a live source of kind {source.kind!r} is registered already")
        self.sources.append(source)

    def nudge(self, merchant_id: str) -> None:
        """Something of ``merchant_id`` was written: its streams read now (any thread)."""
        with self._guard:
            waiting = list(self._waiting.get(merchant_id, ()))
        for loop, event in waiting:
            loop.call_soon_threadsafe(event.set)

    def close(self) -> None:
        """End every stream at its next turn (the sandbox stops)."""
        self.closed = True
        with self._guard:
            merchants = list(self._waiting)
        for merchant_id in merchants:
            self.nudge(merchant_id)

    def _cursors(self, conn: sa.Connection, merchant_id: str, last: str | None) -> dict[str, int]:
        given: dict[str, int] = {}
        for part in (last or "").split(","):
            kind, _, value = part.partition("=")
            if value.isdigit():
                given[kind] = int(value)
        return {
            s.kind: given[s.kind] if s.kind in given else s.cursor(conn, merchant_id)
            for s in self.sources
        }

    def _read(
        self, conn: sa.Connection, merchant_id: str, cursors: dict[str, int]
    ) -> list[tuple[str, LiveRow]]:
        """Each source's rows past its cursor; the cursors moved past them."""
        found: list[tuple[str, LiveRow]] = []
        for source in self.sources:
            rows, cursors[source.kind] = source.since(conn, merchant_id, cursors[source.kind])
            found.extend((source.kind, row) for row in rows)
        return found

    async def stream(
        self,
        db: Database,
        merchant_id: str,
        disconnected: Callable[[], asyncio.Future[bool]] | Callable[[], object],
        last_event_id: str | None = None,
    ) -> AsyncIterator[bytes]:
        """Server-sent events of the merchant's new rows, until the client leaves.

        Args:
            db: the sandbox database.
            merchant_id: whose rows.
            disconnected: an async callable answering whether the client has gone.
            last_event_id: the ``Last-Event-ID`` a reconnecting browser sends: the
                stream carries on from there.
        """
        loop = asyncio.get_running_loop()
        wake = asyncio.Event()
        with self._guard:
            self._waiting.setdefault(merchant_id, []).append((loop, wake))
        try:
            cursors = await db.aread(lambda conn: self._cursors(conn, merchant_id, last_event_id))
            yield b"retry: 2000\n: live\n\n"
            ends = loop.time() + self.stream_seconds
            while not self.closed and loop.time() < ends:
                wake.clear()  # a nudge from now on, even while this frame is out, is kept
                found = await db.aread(lambda conn: self._read(conn, merchant_id, cursors))
                if found:
                    mark = ",".join(f"{k}={v}" for k, v in cursors.items())
                    frames = [
                        "event: row\ndata: "
                        + json.dumps({"kind": kind, "href": row.href, "cells": row.cells})
                        + "\n"
                        for kind, row in found
                    ]
                    # One SSE event per row; the last carries the cursors (Last-Event-ID).
                    yield ("\n".join(frames) + f"id: {mark}\n\n").encode()
                else:
                    yield b": idle\n\n"  # a comment: finds a client that left
                gone = disconnected()
                if asyncio.iscoroutine(gone) or isinstance(gone, asyncio.Future):
                    gone = await gone
                if gone:
                    return
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(wake.wait(), self.poll_seconds)
        finally:
            with self._guard:
                listeners = self._waiting.get(merchant_id, [])
                if (loop, wake) in listeners:
                    listeners.remove((loop, wake))
                if not listeners:
                    self._waiting.pop(merchant_id, None)
