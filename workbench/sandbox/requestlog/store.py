"""The request log in the database: written in batches, trimmed per merchant, read by pages.

Every worker's writer inserts into the one table, so on PostgreSQL each worker's page
shows every worker's requests. A writer trims a merchant to its newest ``keep`` rows
(by ``seq``, the order of insertion) every so often (`trim`), and the reads show the
newest ``keep`` only (``keep`` given to `list_requests` and `find_request`).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import sqlalchemy as sa

from workbench.sandbox import tables
from workbench.sandbox.requestlog.tables import request_log

__all__ = [
    "STATUS_CLASSES",
    "LoggedRequest",
    "RequestFilter",
    "find_request",
    "insert_rows",
    "list_requests",
    "trim",
]

#: The status classes a list may be filtered by.
STATUS_CLASSES = ("2xx", "3xx", "4xx", "5xx")

_t = request_log.c


@dataclass(frozen=True, slots=True)
class LoggedRequest:
    """One stored request, redacted.

    Attributes:
        seq: its place in the log (higher is newer).
        request_id: its ``requestId``.
        at: when it arrived (aware UTC).
        method: the HTTP method.
        path: the path (and query) served, bearers cut.
        status: the answer's HTTP status.
        code: the error envelope's code, if any.
        idempotency_key: the Idempotency-Key sent, if any.
        replayed: whether the answer was an idempotent replay.
        latency_ms: from its arrival to the last byte of its answer.
        request_headers: ``(name, value)`` pairs, X-Signature cut to 8 hex characters.
        request_body: the request body as text, redacted.
        response_body: the answer's body as text, redacted.
        diagnosis: a signature refusal's diagnosis, else ``None``.
    """

    seq: int
    request_id: str
    at: datetime
    method: str
    path: str
    status: int
    code: str | None
    idempotency_key: str | None
    replayed: bool
    latency_ms: float
    request_headers: tuple[tuple[str, str], ...]
    request_body: str
    response_body: str
    diagnosis: dict[str, Any] | None

    @classmethod
    def from_row(cls, row: Any) -> LoggedRequest:
        """The request of a ``request_log`` row."""
        return cls(
            seq=row.seq,
            request_id=row.request_id,
            at=row.at,
            method=row.method,
            path=row.path,
            status=row.status,
            code=row.code,
            idempotency_key=row.idempotency_key,
            replayed=bool(row.replayed),
            latency_ms=row.latency_us / 1000,
            request_headers=tuple((n, v) for n, v in json.loads(row.request_headers)),
            request_body=row.request_body,
            response_body=row.response_body,
            diagnosis=json.loads(row.diagnosis) if row.diagnosis else None,
        )


@dataclass(frozen=True, slots=True)
class RequestFilter:
    """What a list of requests is narrowed to (each ``None``: any).

    Attributes:
        status_class: ``"2xx"``, ``"3xx"``, ``"4xx"`` or ``"5xx"``.
        path: text the path contains.
        code: the error code, exactly.
        idempotency_key: the Idempotency-Key, exactly.
    """

    status_class: str | None = None
    path: str | None = None
    code: str | None = None
    idempotency_key: str | None = None

    def clauses(self) -> list[sa.ColumnElement[bool]]:
        """The filter as SQL conditions."""
        out: list[sa.ColumnElement[bool]] = []
        if self.status_class in STATUS_CLASSES:
            low = int(self.status_class[0]) * 100
            out.append(_t.status.between(low, low + 99))
        if self.path:
            out.append(_t.path.contains(self.path, autoescape=True))
        if self.code:
            out.append(_t.code == self.code)
        if self.idempotency_key:
            out.append(_t.idempotency_key == self.idempotency_key)
        return out


def insert_rows(conn: sa.Connection, rows: Sequence[Mapping[str, Any]]) -> int:
    """Insert a batch of rows (`workbench.sandbox.requestlog.records.row_of`), but those of
    a merchant deleted since its request: its data is gone, its log with it. The number
    inserted.

    The merchants are read in the write's own transaction, with a share lock on
    PostgreSQL: a deletion that comes first is seen (SQLite's writers take turns; on
    PostgreSQL the read waits for the deletion's commit), and one that comes after
    deletes these rows with the rest.
    """
    named = {str(row["merchant_id"]) for row in rows}
    if not named:
        return 0
    m = tables.merchants
    here = set(
        conn.execute(
            sa.select(m.c.id).where(m.c.id.in_(sorted(named))).with_for_update(read=True)
        ).scalars()
    )
    kept = [row for row in rows if row["merchant_id"] in here]
    if kept:
        conn.execute(sa.insert(request_log), kept)
    return len(kept)


def trim(conn: sa.Connection, merchant_ids: Iterable[str], keep: int) -> int:
    """Delete each merchant's rows but its newest ``keep``; the number deleted."""
    deleted = 0
    for merchant_id in merchant_ids:
        newest_dropped = (
            sa.select(_t.seq)
            .where(_t.merchant_id == merchant_id)
            .order_by(_t.seq.desc())
            .offset(keep)
            .limit(1)
            .scalar_subquery()
        )
        done = conn.execute(
            sa.delete(request_log).where(_t.merchant_id == merchant_id, _t.seq <= newest_dropped)
        )
        deleted += max(done.rowcount or 0, 0)
    return deleted


def _kept(merchant_id: str, keep: int | None) -> list[sa.ColumnElement[bool]]:
    """Only the merchant's newest ``keep`` rows (all with ``None``)."""
    if keep is None:
        return []
    oldest_kept = (
        sa.select(_t.seq)
        .where(_t.merchant_id == merchant_id)
        .order_by(_t.seq.desc())
        .offset(max(keep - 1, 0))
        .limit(1)
        .scalar_subquery()
    )
    return [_t.seq >= sa.func.coalesce(oldest_kept, 0)]


def list_requests(
    conn: sa.Connection,
    merchant_id: str,
    where: RequestFilter = RequestFilter(),
    *,
    keep: int | None = None,
    before: int | None = None,
    after: int | None = None,
    limit: int = 50,
    oldest_first: bool = False,
) -> list[LoggedRequest]:
    """A merchant's requests, the newest arrival first (or the oldest written first).

    Args:
        conn: a connection.
        merchant_id: whose log.
        where: the filters.
        keep: only among the merchant's newest ``keep`` (the log's size).
        before: only those that arrived before the request of this ``seq`` (the next
            page: its last request's ``seq``).
        after: only those newer than this ``seq`` (what arrived since).
        limit: at most this many.
        oldest_first: in the order they were written (what was written since ``after``,
            for the live list), ``before`` ignored.
    """
    query = sa.select(request_log).where(
        _t.merchant_id == merchant_id, *where.clauses(), *_kept(merchant_id, keep)
    )
    if after is not None:  # what was written since: in the order it was written
        query = query.where(_t.seq > after)
    if oldest_first:
        rows = conn.execute(query.order_by(_t.seq.asc()).limit(limit))
        return [LoggedRequest.from_row(row) for row in rows]
    if before is not None:
        # Arrival order: each worker writes its own batches, so ``seq`` is not it.
        at = sa.select(_t.at).where(_t.seq == before).scalar_subquery()
        query = query.where(sa.or_(_t.at < at, sa.and_(_t.at == at, _t.seq < before)))
    rows = conn.execute(query.order_by(_t.at.desc(), _t.seq.desc()).limit(limit))
    return [LoggedRequest.from_row(row) for row in rows]


def find_request(
    conn: sa.Connection, merchant_id: str, request_id: str, *, keep: int | None = None
) -> LoggedRequest | None:
    """A merchant's request by its ``requestId`` (the newest, should one be repeated),
    among its newest ``keep``; ``None`` when the merchant has none of that id, another
    merchant's included."""
    row = conn.execute(
        sa.select(request_log)
        .where(
            _t.merchant_id == merchant_id,
            _t.request_id == request_id,
            *_kept(merchant_id, keep),
        )
        .order_by(_t.seq.desc())
        .limit(1)
    ).one_or_none()
    return None if row is None else LoggedRequest.from_row(row)
