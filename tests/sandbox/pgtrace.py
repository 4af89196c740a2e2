"""libpq's protocol trace, to count a PostgreSQL engine's round trips (never from timings)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import sqlalchemy as sa
from psycopg import pq

__all__ = ["Trace"]


class Trace:
    """libpq's protocol trace of every connection an engine hands out from now on."""

    def __init__(self, engine: sa.Engine, path: Path) -> None:
        self.path = path
        self._file = path.open("w")
        self._traced: list[Any] = []

        @sa.event.listens_for(engine, "checkout")
        def _trace(dbapi_conn: Any, record: Any, _proxy: Any) -> None:
            if record.info.get("traced") is not self:
                record.info["traced"] = self
                dbapi_conn.pgconn.trace(self._file.fileno())
                dbapi_conn.pgconn.set_trace_flags(pq.Trace.SUPPRESS_TIMESTAMPS)
                self._traced.append(dbapi_conn)

    def round_trips(self) -> int:
        """Server answers (ReadyForQuery) so far, less the idle pings (``;``).

        Stops tracing first: libpq buffers its trace and flushes it when it stops.
        """
        for dbapi_conn in self._traced:
            dbapi_conn.pgconn.untrace()
        self._file.close()
        # "B<tab>5<tab>ReadyForQuery<tab> I": direction, length, message, contents.
        messages = [line.split("\t")[:4] for line in self.path.read_text().splitlines()]
        answers = sum(1 for m in messages if m[:1] == ["B"] and m[2:3] == ["ReadyForQuery"])
        pings = sum(1 for m in messages if m[:1] == ["F"] and m[2:] == ["Query", ' ";"'])
        return answers - pings
