"""The request log's pages: the merchant's last API requests, and each request whole.

| method | path | what |
|---|---|---|
| GET | ``/dashboard/requests?status=&path=&code=&key=&before=`` | newest first, 50 a page (live) |
| GET | ``/dashboard/requests/{requestId}`` | headers, bodies, a signature refusal's diagnosis |

What is shown is what the request log stored (`workbench.sandbox.requestlog`): bodies
as the redaction left them, X-Signature cut to 8 hex characters, and for SVC-GW-1001
and SVC-GW-1002 the canonical string the sandbox built, with the likely mistake (the
rules of ``workbench sign --expect``). Another merchant's request answers 404 exactly
as a missing one. The list's first page without filters is live: `RequestSource`
streams the rows written since (`workbench.sandbox.dashboard.live`).
"""

from __future__ import annotations

import json
from typing import Annotated

import sqlalchemy as sa
from fastapi import Path, Query, Request
from starlette.responses import Response

from workbench.sandbox.checkout.messages import N_
from workbench.sandbox.checkout.rendering import page_language
from workbench.sandbox.clock import iso
from workbench.sandbox.dashboard.live import BATCH, LiveRow
from workbench.sandbox.dashboard.routes import page_router
from workbench.sandbox.dashboard.site import PREFIX, NavItem, Page, Services, ViewerDep, render
from workbench.sandbox.requestlog import (
    STATUS_CLASSES,
    LoggedRequest,
    RequestFilter,
    find_request,
    list_requests,
    request_log,
)

__all__ = ["PAGE", "PAGE_SIZE", "RequestSource", "pretty", "router"]

router = page_router()
PAGE = Page(router, (NavItem("requests", N_("Requests"), f"{PREFIX}/requests"),))

#: Requests a page of the list shows.
PAGE_SIZE = 50

RequestId = Annotated[str, Path(max_length=64, pattern=r"^[A-Za-z0-9-]{1,64}$")]
_R = request_log.c


def pretty(body: str) -> str:
    """A stored body for reading: JSON indented, anything else as it is."""
    if not body:
        return ""
    try:
        value = json.loads(body)
    except ValueError:
        return body
    return json.dumps(value, indent=2, ensure_ascii=False)


def _cells(entry: LoggedRequest) -> tuple[str, ...]:
    """A list row's cells (the live rows' too): id, time, request, status, code, key."""
    return (
        entry.request_id,
        iso(entry.at) or "",
        f"{entry.method} {entry.path}",
        str(entry.status) + (" (replay)" if entry.replayed else ""),
        entry.code or "",
        entry.idempotency_key or "",
    )


class RequestSource:
    """The merchant's new requests (``data-live="requests"``), as the list's rows."""

    kind = "requests"

    def cursor(self, conn: sa.Connection, merchant_id: str) -> int:
        """The merchant's newest request's ``seq``."""
        found = conn.execute(
            sa.select(sa.func.max(_R.seq)).where(_R.merchant_id == merchant_id)
        ).scalar()
        return int(found or 0)

    def since(
        self, conn: sa.Connection, merchant_id: str, cursor: int
    ) -> tuple[list[LiveRow], int]:
        """Requests past ``cursor``, oldest first."""
        found = list_requests(conn, merchant_id, after=cursor, limit=BATCH, oldest_first=True)
        rows = [LiveRow(f"{PREFIX}/requests/{e.request_id}", _cells(e)) for e in found]
        return rows, found[-1].seq if found else cursor


@router.get(f"{PREFIX}/requests")
def requests_list(
    request: Request,
    viewer: ViewerDep,
    sandbox: Services,
    status: Annotated[str, Query(max_length=3)] = "",
    path: Annotated[str, Query(max_length=200)] = "",
    code: Annotated[str, Query(max_length=32)] = "",
    key: Annotated[str, Query(max_length=255)] = "",
    before: Annotated[int | None, Query(ge=1)] = None,
) -> Response:
    """The merchant's last requests, newest first, filtered, a page at a time."""
    where = RequestFilter(
        status_class=status if status in STATUS_CLASSES else None,
        path=path or None,
        code=code or None,
        idempotency_key=key or None,
    )
    with sandbox.db.read() as conn:
        found = list_requests(
            conn,
            viewer.merchant_id,
            where,
            keep=sandbox.config.request_log_size,
            before=before,
            limit=PAGE_SIZE + 1,
        )
    entries, more = found[:PAGE_SIZE], len(found) > PAGE_SIZE
    filters = {"status": status, "path": path, "code": code, "key": key}
    older = None
    if more:
        older = {**{k: v for k, v in filters.items() if v}, "before": str(entries[-1].seq)}
    return render(
        request,
        "requests.html",
        page_language(request),
        viewer=viewer,
        section="requests",
        rows=[(e, _cells(e)) for e in entries],
        filters=filters,
        classes=STATUS_CLASSES,
        older=older,
        live=not any(filters.values()) and before is None,
        kept=sandbox.config.request_log_size,
    )


@router.get(f"{PREFIX}/requests/{{request_id}}")
def request_page(
    request: Request, request_id: RequestId, viewer: ViewerDep, sandbox: Services
) -> Response:
    """One request of the merchant (404 for another merchant's, as for a missing one)."""
    with sandbox.db.read() as conn:
        found = find_request(
            conn, viewer.merchant_id, request_id, keep=sandbox.config.request_log_size
        )
    lang = page_language(request)
    if found is None:
        return render(
            request, "not_found.html", lang, 404, viewer=viewer, section="requests", kind="requests"
        )
    return render(
        request,
        "request.html",
        lang,
        viewer=viewer,
        section="requests",
        entry=found,
        request_body=pretty(found.request_body),
        response_body=pretty(found.response_body),
    )
