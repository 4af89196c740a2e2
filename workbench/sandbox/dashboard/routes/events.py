"""Events, their webhook deliveries and the resend button.

| method | path | what |
|---|---|---|
| GET | ``/dashboard/events?q=&type=`` | the newest 100 events (live: new ones appear) |
| GET | ``/dashboard/events/{id}`` | payload, delivery state, every attempt, related objects |
| POST | ``/dashboard/events/{id}/resend`` | one attempt now (idempotent: the form's key) |

Resend goes through the sandbox's one door for idempotent posts
(`workbench.sandbox.routing.IdempotentPost`), acting as the session's merchant and key:
its transaction claims the event's next attempt (`events.WebhookWork.claim_resend`),
and once committed the attempt is sent and waited for. The form carries an
Idempotency-Key made when the page was drawn, so a double submit, or the browser
posting the form again, sends nothing twice.
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from typing import Annotated, Any

import sqlalchemy as sa
from fastapi import Path, Query, Request
from starlette.responses import RedirectResponse, Response

from workbench.sandbox.checkout.messages import N_
from workbench.sandbox.checkout.rendering import page_language
from workbench.sandbox.context import Caller
from workbench.sandbox.dashboard.routes import page_router
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
from workbench.sandbox.dashboard.views import event_page, list_events
from workbench.sandbox.errors import ServiceError, request_id_of
from workbench.sandbox.events import ResendClaim
from workbench.sandbox.idempotency import fingerprint
from workbench.sandbox.replies import Reply
from workbench.sandbox.routing import IdempotentPost

__all__ = ["PAGE", "caller_for", "router"]

router = page_router()
PAGE = Page(router, (NavItem("events", N_("Events"), f"{PREFIX}/events"),))

EventId = Annotated[str, Path(pattern=r"^evt_[A-Za-z0-9]{1,60}$")]


def caller_for(request: Request, viewer: Viewer) -> Caller:
    """The session's merchant as the caller of a write (its idempotency records' owner)."""
    return Caller(viewer.api_key, viewer.merchant_id, viewer.store_id, request_id_of(request.scope))


@router.get(f"{PREFIX}/events")
def events_list(
    request: Request,
    viewer: ViewerDep,
    sandbox: Services,
    q: Annotated[str, Query(max_length=64)] = "",
    type: Annotated[str, Query(max_length=60)] = "",
) -> Response:
    """The merchant's newest events."""
    with sandbox.db.read() as conn:
        rows = list_events(conn, viewer.merchant_id, q, type)
    return render(
        request,
        "events.html",
        page_language(request),
        viewer=viewer,
        section="events",
        rows=rows,
        q=q,
        type=type,
        live=not q and not type,
    )


def _event_response(
    request: Request,
    viewer: Viewer,
    sandbox: Services,
    event_id: str,
    status: int = 200,
    notice: str | None = None,
) -> Response:
    with sandbox.db.read() as conn:
        found = event_page(conn, viewer.merchant_id, event_id)
    lang = page_language(request)
    if found is None:
        return render(
            request,
            "not_found.html",
            lang,
            404,
            switch_url=PREFIX,
            viewer=viewer,
            section="events",
            kind="events",
        )
    return render(
        request,
        "event.html",
        lang,
        status,
        viewer=viewer,
        section="events",
        event=found,
        idempotency_key=str(uuid.uuid4()),
        notice=notice,
        resent=request.query_params.get("resent", ""),
    )


@router.get(f"{PREFIX}/events/{{event_id}}")
def event_detail(
    request: Request, event_id: EventId, viewer: ViewerDep, sandbox: Services
) -> Response:
    """An event: its payload, delivery attempts and the resend button."""
    return _event_response(request, viewer, sandbox, event_id)


#: Why a resend was refused, as the page says it.
_REFUSALS = {
    "no such event": N_("There is no such event."),
    "an attempt of this event is under way": N_("An attempt of this event is under way."),
    "the store has no webhook URL": N_("The store has no webhook URL: set one first."),
}


@router.post(f"{PREFIX}/events/{{event_id}}/resend")
async def resend(
    request: Request, event_id: EventId, viewer: ViewerDep, sandbox: Services
) -> Response:
    """Send the event once more, now, through the one door for idempotent posts."""
    try:
        fields = await read_form(request, viewer.csrf)
    except FormRefused:
        return refused_page(request)
    key = fields.get("idempotency_key") or None
    door = IdempotentPost(
        sandbox.db, caller_for(request, viewer), request.url.path, key, sandbox.sealer
    )
    claimed: dict[str, ResendClaim] = {}

    def work(conn: sa.Connection) -> Reply:
        outcome = sandbox.webhooks.claim_resend(conn, viewer.merchant_id, event_id)
        if isinstance(outcome, str):
            code = "SVC-GW-4004" if outcome == "no such event" else "SVC-GW-4090"
            raise ServiceError(code, outcome)
        claimed["claim"] = outcome
        return Reply.json(200, {"eventId": event_id, "attempt": outcome.attempt})

    try:
        reply = await door.planned(lambda _plan: work, digest=fingerprint(None))
    except ServiceError as refusal:
        notice = _REFUSALS.get(refusal.message, refusal.message)
        return _event_response(request, viewer, sandbox, event_id, refusal.status, notice)
    claim = claimed.get("claim")
    if claim is not None:  # not a replay: the attempt is this request's to send
        timeout = sandbox.config.webhook_timeout_seconds + 5
        # Past it the attempt carries on, and records its own outcome when it ends.
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(
                sandbox.webhooks.send_claimed(viewer.merchant_id, claim), timeout
            )
    attempt = _attempt_of(reply)
    return RedirectResponse(f"{PREFIX}/events/{event_id}?resent={attempt}", status_code=303)


def _attempt_of(reply: Reply) -> str:
    import json

    try:
        body: Any = json.loads(reply.body)
    except ValueError:
        return ""
    return str(body.get("attempt", "")) if isinstance(body, dict) else ""
