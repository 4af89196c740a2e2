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

Every page speaks the buyer's language (`workbench.sandbox.checkout.languages`): the
forms post to their address with ``?lang=`` and the challenge address carries it too,
so the choice holds through the flow; the redirect to ``returnUrl`` is left as the
merchant wrote it.
"""

from __future__ import annotations

import re
from typing import Literal

from fastapi import APIRouter, Request
from starlette.responses import RedirectResponse, Response

from workbench.sandbox.checkout import flow, languages
from workbench.sandbox.checkout.forms import CardForm, FormError, parse_body
from workbench.sandbox.checkout.messages import ENDED, refusal
from workbench.sandbox.checkout.rendering import (
    page_language,
    qr_svg,
    render,
    script,
    stylesheet,
    translate,
    with_lang,
)
from workbench.sandbox.clock import iso
from workbench.sandbox.errors import ServiceError, request_id_of
from workbench.sandbox.lazy_routes import LazyAPIRoute
from workbench.sandbox.routing import RouteServices, SandboxDep, base_url
from workbench.sandbox.subscriptions.portal_return import open_return

__all__ = ["ended_page", "router"]

router = APIRouter(
    route_class=LazyAPIRoute,
    tags=["hosted-checkout"],
    redirect_slashes=False,
    include_in_schema=False,
)

_SESSION_ID = re.compile(r"^[0-9a-fA-F-]{36}$")


def ended_page(request: Request, ended: flow.Ended | Literal["no-challenge"]) -> Response:
    """The clear page for a session that is missing, expired or completed (or a challenge
    that is not waiting: ``no-challenge``)."""
    reason = ended if isinstance(ended, str) else ended.reason
    lang = page_language(request)
    status, heading, message = ENDED[reason]
    return render(
        "ended.html",
        lang,
        status,
        # The path only: an unknown address's query is not echoed into the page.
        switch_url=request.url.path if request.method == "GET" else None,
        static_base=_static_base(request),
        reason=reason,
        heading=translate(heading, lang),
        message=translate(message, lang),
        return_url=None if isinstance(ended, str) else _buyer_url(request, ended.return_url),
    )


def _buyer_url(request: Request, url: str | None) -> str | None:
    """Where the buyer goes back to: the session's ``returnUrl``, a portal hash it keeps
    sealed opened (``None`` if it cannot be: sealed under another replay key)."""
    if url is None:
        return None
    return open_return(url, request.app.state.sandbox.sealer)


def _static_base(request: Request) -> str:
    return base_url(request, request.app.state.sandbox)


def _answer(request: Request, result: flow.Redirect | flow.Ended) -> Response:
    if isinstance(result, flow.Ended):
        return ended_page(request, result)
    # The challenge page is the sandbox's own: it gets the page's language. The
    # merchant's returnUrl is left as the merchant wrote it.
    if result.final:
        url = _buyer_url(request, result.url)
        if url is None:  # a portal link sealed under another key: the page says it is done
            return ended_page(request, flow.Ended("completed"))
    else:
        url = with_lang(result.url, page_language(request).code)
    return RedirectResponse(url, status_code=303, headers={"Cache-Control": "no-store"})


async def _page(
    request: Request,
    sandbox: RouteServices,
    session_id: str,
    *,
    status: int = 200,
    error: str | None = None,
    error_field: str | None = None,
    error_code: str | None = None,
    values: dict[str, str] | None = None,
    params: dict[str, int] | None = None,
) -> Response:
    """The session's page; ``error`` is an English message, shown in the page's language."""
    if not _SESSION_ID.match(session_id):
        return ended_page(request, flow.Ended("missing"))
    view = await sandbox.db.aread(lambda conn: flow.page_view(conn, session_id))
    if isinstance(view, flow.Ended):
        return ended_page(request, view)
    kept = values or {}
    lang = page_language(request)
    return render(
        "checkout.html",
        lang,
        status,
        switch_url=view.checkout_url,
        static_base=_static_base(request),
        view=view,
        qr=qr_svg(view.qr_payload) if view.qr_payload else "",
        error=translate(error, lang, params) if error else None,
        error_field=error_field,
        error_code=error_code,
        # Only what is safe to show again: never the card number or the CVC.
        values={
            "expiry": kept.get("expiry", "")[:7],
            "holder": kept.get("holder", "")[:100],
            "installments": kept.get("installments", "1")[:2],
        },
        expires_iso=iso(view.expires_at),
        expires_text=languages.moment(view.expires_at, lang.code),
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
            error_field=exc.field, values=data, params=exc.params,
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
        return await _page(
            request, sandbox, session_id, status=400, error=exc.message, params=exc.params
        )
    except ServiceError as exc:
        return await _refused(request, sandbox, session_id, exc, {})
    return _answer(request, result)


async def _refused(
    request: Request,
    sandbox: RouteServices,
    session_id: str,
    exc: ServiceError,
    data: dict[str, str],
) -> Response:
    """What the service refused (nothing recorded): the page again, with the reason."""
    if exc.code == "SVC-SES-4090":
        return ended_page(request, flow.Ended("expired"))
    if isinstance(exc, flow.ForeignPayment):
        return ended_page(request, flow.Ended("taken", exc.return_url))
    field, message = refusal(exc.code, exc.message)
    return await _page(
        request, sandbox, session_id, status=400, error=message,
        error_field=field, error_code=exc.code, values=data,
    )  # fmt: skip


@router.get("/checkout/{session_id}/{action}")
def reload_of_a_form_address(session_id: str, action: str, request: Request) -> Response:
    """A reload or bookmark of a form's address (``…/pay``, ``…/qr``, ``…/3ds-callback``)
    goes back to the session's page, which shows where things stand; nothing is submitted."""
    if not _SESSION_ID.match(session_id) or action not in ("pay", "qr", "3ds-callback"):
        return ended_page(request, flow.Ended("missing"))
    page = f"{_static_base(request)}/checkout/{session_id}"
    chosen = request.query_params.get("lang")
    return RedirectResponse(with_lang(page, chosen) if chosen else page, status_code=303)


@router.api_route("/checkout/{rest:path}", methods=["GET", "POST", "HEAD"])
def unknown_page(rest: str, request: Request) -> Response:
    """Any other address under /checkout: the "not found" page, as HTML."""
    return ended_page(request, flow.Ended("missing"))
