"""Routes of the hosted pages: the checkout page, its submits, the 3DS return, the stylesheet.

These are the buyer's pages: no signature (the session id in the address is the
bearer) and every answer is HTML or a redirect, never the JSON envelope, never a
stack trace. Paths (see docs/sandbox/decisions.md, "Hosted checkout"):

| method | path | what |
|---|---|---|
| GET | ``/checkout/{sessionId}`` | the page (card form, TR QR code or card update) |
| POST | ``/checkout/{sessionId}/pay`` | card form submit (payment or card_update_only) |
| POST | ``/checkout/{sessionId}/qr`` | sandbox-only "pay from a bank app" (mode qr) |
| POST | ``/checkout/{sessionId}/3ds-callback`` | the ACS page posts the signed pares here |
| GET | ``/checkout/static/checkout.css`` | the stylesheet |
| GET | ``/checkout/static/checkout.js`` | the pages' one script (no inline script runs) |
"""

from __future__ import annotations

import re

from fastapi import APIRouter, Request
from starlette.responses import RedirectResponse, Response

from workbench.sandbox.checkout import flow
from workbench.sandbox.checkout.forms import CardForm, FormError, parse_body
from workbench.sandbox.checkout.rendering import qr_svg, render, script, stylesheet
from workbench.sandbox.clock import iso
from workbench.sandbox.errors import ServiceError, request_id_of
from workbench.sandbox.routing import Running, SandboxDep, base_url

__all__ = ["ended_page", "router"]

router = APIRouter(tags=["hosted-checkout"], redirect_slashes=False, include_in_schema=False)

_SESSION_ID = re.compile(r"^[0-9a-fA-F-]{36}$")

_ENDED = {
    "missing": (
        404,
        "Checkout not found",
        "There is no checkout at this address. Go back to the shop and start again.",
    ),
    "expired": (
        410,
        "This checkout has expired",
        "The time to pay has run out and nothing was charged. "
        "Go back to the shop to start a new checkout.",
    ),
    "completed": (
        410,
        "This checkout is already completed",
        "This checkout was already finished; it cannot be used again.",
    ),
    "taken": (
        409,
        "This checkout cannot be paid",
        "The shop's order reference for this checkout already belongs to another payment, "
        "so nothing was charged. Go back to the shop to start a new checkout.",
    ),
}


def ended_page(request: Request, ended: flow.Ended) -> Response:
    """The clear page for a session that is missing, expired or completed."""
    status, heading, message = _ENDED[ended.reason]
    return render(
        "ended.html",
        status,
        static_base=_static_base(request),
        reason=ended.reason,
        heading=heading,
        message=message,
        return_url=ended.return_url,
    )


def _static_base(request: Request) -> str:
    return base_url(request, request.app.state.sandbox)


def _answer(request: Request, result: flow.Redirect | flow.Ended) -> Response:
    if isinstance(result, flow.Ended):
        return ended_page(request, result)
    return RedirectResponse(result.url, status_code=303, headers={"Cache-Control": "no-store"})


async def _page(
    request: Request,
    sandbox: Running,
    session_id: str,
    *,
    status: int = 200,
    error: str | None = None,
    error_field: str | None = None,
    values: dict[str, str] | None = None,
) -> Response:
    if not _SESSION_ID.match(session_id):
        return ended_page(request, flow.Ended("missing"))
    view = await sandbox.db.aread(lambda conn: flow.page_view(conn, session_id))
    if isinstance(view, flow.Ended):
        return ended_page(request, view)
    kept = values or {}
    return render(
        "checkout.html",
        status,
        static_base=_static_base(request),
        view=view,
        qr=qr_svg(view.qr_payload) if view.qr_payload else "",
        error=error,
        error_field=error_field,
        # Only what is safe to show again: never the card number or the CVC.
        values={
            "expiry": kept.get("expiry", "")[:7],
            "holder": kept.get("holder", "")[:100],
            "installments": kept.get("installments", "1")[:2],
        },
        expires_iso=iso(view.expires_at),
        expires_text=view.expires_at.strftime("%H:%M UTC, %d.%m.%Y"),
    )


@router.get("/checkout/static/checkout.css")
def checkout_css() -> Response:
    """The pages' stylesheet."""
    return Response(
        stylesheet(), media_type="text/css", headers={"Cache-Control": "public, max-age=300"}
    )


@router.get("/checkout/static/checkout.js")
def checkout_js() -> Response:
    """The pages' script."""
    return Response(
        script(), media_type="text/javascript", headers={"Cache-Control": "public, max-age=300"}
    )


@router.get("/checkout/{session_id}")
async def checkout_page(session_id: str, request: Request, sandbox: SandboxDep) -> Response:
    """The hosted page of a session, or the page saying it has ended."""
    return await _page(request, sandbox, session_id)


@router.post("/checkout/{session_id}/pay")
async def pay(session_id: str, request: Request, sandbox: SandboxDep) -> Response:
    """The card form's submit: tokenize, then charge by token (or update the card)."""
    if not _SESSION_ID.match(session_id):
        return ended_page(request, flow.Ended("missing"))
    data: dict[str, str] = {}
    try:
        data = parse_body(await request.body())
        view = await sandbox.db.aread(lambda conn: flow.page_view(conn, session_id))
        allowed = isinstance(view, flow.PageView) and view.installments
        form = CardForm.parse(data, installments_allowed=allowed)
        base, request_id = _static_base(request), request_id_of(request.scope)
        result = await sandbox.db.atransact(
            lambda conn: flow.pay_by_card(
                conn, session_id, form, base_url=base, request_id=request_id
            )
        )
    except FormError as exc:
        return await _page(
            request, sandbox, session_id, status=400, error=exc.message,
            error_field=exc.field, values=data,
        )  # fmt: skip
    except ServiceError as exc:
        return await _refused(request, sandbox, session_id, exc, data)
    return _answer(request, result)


@router.post("/checkout/{session_id}/qr")
async def pay_qr(session_id: str, request: Request, sandbox: SandboxDep) -> Response:
    """Sandbox only: the buyer's bank app pays the TR QR code of this session."""
    if not _SESSION_ID.match(session_id):
        return ended_page(request, flow.Ended("missing"))
    try:
        result = await sandbox.db.atransact(lambda conn: flow.pay_by_qr(conn, session_id))
    except ServiceError as exc:
        return await _refused(request, sandbox, session_id, exc, {})
    return _answer(request, result)


@router.post("/checkout/{session_id}/3ds-callback")
async def threeds_return(session_id: str, request: Request, sandbox: SandboxDep) -> Response:
    """The ACS page's return: the signed pares goes through the 3ds-callback."""
    if not _SESSION_ID.match(session_id):
        return ended_page(request, flow.Ended("missing"))
    try:
        data = parse_body(await request.body())
        secret, base = sandbox.acs_secret, _static_base(request)
        request_id = request_id_of(request.scope)
        result = await sandbox.db.atransact(
            lambda conn: flow.finish_challenge(
                conn, secret, session_id, data, base_url=base, request_id=request_id
            )
        )
    except FormError as exc:
        return await _page(request, sandbox, session_id, status=400, error=exc.message)
    except ServiceError as exc:
        return await _refused(request, sandbox, session_id, exc, {})
    return _answer(request, result)


async def _refused(
    request: Request,
    sandbox: Running,
    session_id: str,
    exc: ServiceError,
    data: dict[str, str],
) -> Response:
    """What the service refused (nothing recorded): the page again, with the reason."""
    if exc.code == "SVC-SES-4090":
        return ended_page(request, flow.Ended("expired"))
    if isinstance(exc, flow.ForeignPayment):
        return ended_page(request, flow.Ended("taken", exc.return_url))
    field = "cardNumber" if exc.message.startswith("cardNumber") else None
    if exc.message.startswith("expiry"):
        field = "expiry"
    return await _page(
        request, sandbox, session_id, status=400, error=f"{exc.message} ({exc.code})",
        error_field=field, values=data,
    )  # fmt: skip


@router.get("/checkout/{session_id}/{action}")
def reload_of_a_form_address(session_id: str, action: str, request: Request) -> Response:
    """A reload or bookmark of a form's address (``…/pay``, ``…/qr``, ``…/3ds-callback``)
    goes back to the session's page, which shows where things stand; nothing is submitted."""
    if not _SESSION_ID.match(session_id) or action not in ("pay", "qr", "3ds-callback"):
        return ended_page(request, flow.Ended("missing"))
    return RedirectResponse(f"{_static_base(request)}/checkout/{session_id}", status_code=303)


@router.api_route("/checkout/{rest:path}", methods=["GET", "POST", "HEAD"])
def unknown_page(rest: str, request: Request) -> Response:
    """Any other address under /checkout: the "not found" page, as HTML."""
    return ended_page(request, flow.Ended("missing"))
