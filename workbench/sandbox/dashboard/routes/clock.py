"""The merchant's business clock: where it stands, and moving it forward.

| method | path | what |
|---|---|---|
| GET | ``/dashboard/clock`` | the business time; buttons: an hour, a day, a month, a given time |
| POST | ``/dashboard/clock/advance`` | moves it, then shows what fell due (the events made) |

The advance is the ``POST /sandbox/clock/advance`` control's: the target fixed when the
form's Idempotency-Key is first claimed (`control.service.advance_target`), then the
reconciler's `advance_to`, which runs the work that falls due in order, under
`idempotency.run_claimed`. A month is the calendar's (the day kept, clamped to the
month's end, as subscriptions count months).
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import anyio.to_thread
import sqlalchemy as sa
from fastapi import Request
from pydantic import BaseModel
from starlette.responses import Response

from workbench.sandbox import tables
from workbench.sandbox.checkout.messages import N_
from workbench.sandbox.checkout.rendering import page_language
from workbench.sandbox.clock import business_now, iso
from workbench.sandbox.control import service as control
from workbench.sandbox.control.models import MAX_ADVANCE_SECONDS
from workbench.sandbox.dashboard.routes import page_router
from workbench.sandbox.dashboard.routes.events import caller_for
from workbench.sandbox.dashboard.sessions import Viewer
from workbench.sandbox.dashboard.site import (
    PREFIX,
    FormRefused,
    NavItem,
    Page,
    Services,
    ViewerDep,
    read_form,
    refused_page,
    render,
)
from workbench.sandbox.errors import ServiceError
from workbench.sandbox.idempotency import fingerprint, run_claimed
from workbench.sandbox.replies import Reply
from workbench.sandbox.subscriptions.schedule import add_months

__all__ = ["PAGE", "router"]

router = page_router()
PAGE = Page(router, (NavItem("clock", N_("Clock"), f"{PREFIX}/clock"),))

_E = tables.events
_STEPS = {"hour": timedelta(hours=1), "day": timedelta(days=1)}


class _Advance(BaseModel):
    """What an advance form asked for (its payload, for the key's fingerprint)."""

    step: str
    until: str = ""


def _page(
    request: Request,
    viewer: Viewer,
    sandbox: Services,
    status: int = 200,
    *,
    error: str | None = None,
    fell_due: list[Any] | None = None,
    moved: tuple[str, str] | None = None,
) -> Response:
    with sandbox.db.read() as conn:
        now = business_now(conn, viewer.merchant_id)
    return render(
        request,
        "clock.html",
        page_language(request),
        status,
        viewer=viewer,
        section="clock",
        business_time=iso(now),
        business_local=now.strftime("%Y-%m-%dT%H:%M"),
        keys=[str(uuid.uuid4()) for _ in range(4)],
        error=error,
        fell_due=fell_due,
        moved=moved,
    )


@router.get(f"{PREFIX}/clock")
def clock(request: Request, viewer: ViewerDep, sandbox: Services) -> Response:
    """The business time and the buttons."""
    return _page(request, viewer, sandbox)


def _target(conn: sa.Connection, merchant_id: str, form: _Advance) -> int:
    """Seconds from the business time now to the form's target (refused if backwards)."""
    now = business_now(conn, merchant_id)
    if form.step in _STEPS:
        return int(_STEPS[form.step].total_seconds())
    if form.step == "month":
        return int((add_months(now, 1) - now).total_seconds())
    if form.step == "until":
        try:
            until = datetime.fromisoformat(form.until).replace(tzinfo=UTC)
        except ValueError:
            raise ServiceError("SVC-GW-4000", "not a date and time") from None
        seconds = int((until - now).total_seconds())
        if seconds < 0:
            raise ServiceError("SVC-GW-4000", "the clock only moves forward")
        return seconds
    raise ServiceError("SVC-GW-4000", "no such step")


#: The page's words for the refusals above.
_REFUSALS = {
    "not a date and time": N_("That is not a date and time."),
    "the clock only moves forward": N_("The clock only moves forward: pick a later time."),
    "no such step": N_("That is not a step the clock takes."),
    "too far": N_("At most 400 days at a time."),
}


@router.post(f"{PREFIX}/clock/advance")
async def advance(request: Request, viewer: ViewerDep, sandbox: Services) -> Response:
    """Move the clock (once per form key), then show the events that fell due."""
    try:
        fields = await read_form(request, viewer.csrf)
    except FormRefused:
        return refused_page(request)
    form = _Advance(step=fields.get("step", "")[:10], until=fields.get("until", "")[:40])
    merchant_id = viewer.merchant_id
    caller = caller_for(request, viewer)
    before = await sandbox.db.aread(
        lambda conn: (
            business_now(conn, merchant_id),
            conn.execute(
                sa.select(sa.func.max(_E.c.seq)).where(_E.c.merchant_id == merchant_id)
            ).scalar()
            or 0,
        )
    )

    def plan(conn: sa.Connection) -> bytes:
        seconds = _target(conn, merchant_id, form)
        if seconds > MAX_ADVANCE_SECONDS:
            raise ServiceError("SVC-GW-4000", "too far")
        return control.advance_target(conn, merchant_id, seconds)

    async def action(fixed: bytes) -> Reply:
        def run() -> datetime:
            try:
                return sandbox.reconciler.advance_to(merchant_id, control.target_of(fixed))
            except TimeoutError as exc:
                raise ServiceError("SVC-GW-5030", str(exc)) from exc

        moment = await anyio.to_thread.run_sync(run)
        return Reply.json(200, {"businessTime": iso(moment)})

    try:
        await run_claimed(
            sandbox.db,
            caller,
            "POST",
            request.url.path,
            fields.get("idempotency_key") or None,
            action,
            digest=fingerprint(form),
            plan=plan,
        )
    except ServiceError as refusal:
        message = _REFUSALS.get(refusal.message, refusal.message)
        return _page(request, viewer, sandbox, refusal.status, error=message)
    fell_due = await sandbox.db.aread(
        lambda conn: conn.execute(
            sa.select(_E.c.id, _E.c.type, _E.c.created_at, _E.c.delivery_state)
            .where(_E.c.merchant_id == merchant_id, _E.c.seq > before[1])
            .order_by(_E.c.seq)
        ).all()
    )
    with sandbox.db.read() as conn:
        after = business_now(conn, merchant_id)
    return _page(
        request,
        viewer,
        sandbox,
        fell_due=list(fell_due),
        moved=(iso(before[0]) or "", iso(after) or ""),
    )
