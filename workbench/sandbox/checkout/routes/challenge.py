"""Routes: the sandbox's 3-D Secure challenge (ACS): the buyer's page and the API answer.

The signing of the answer is `workbench.sandbox.payments.acs`; the pages are here with
the other hosted pages, whose templates, forms and 3DS return they share.

No signature: these are the buyer's (and the bank's) side of the challenge."""

from __future__ import annotations

import hmac
from typing import Annotated

import sqlalchemy as sa
from fastapi import APIRouter, Query, Request
from starlette.responses import HTMLResponse, Response

from workbench.sandbox.cards import CHALLENGE_CODE
from workbench.sandbox.checkout import flow
from workbench.sandbox.checkout.forms import FormError, parse_body
from workbench.sandbox.checkout.rendering import here, page_language, render, with_lang
from workbench.sandbox.checkout.routes.pages import ended_page
from workbench.sandbox.errors import ServiceError, request_id_of
from workbench.sandbox.lazy_routes import LazyAPIRoute
from workbench.sandbox.payments import acs
from workbench.sandbox.payments.models import ChallengeRequest, ChallengeResponse
from workbench.sandbox.payments.tables import payments
from workbench.sandbox.replies import Reply
from workbench.sandbox.routing import (
    PUBLIC_ERRORS,
    PaymentId,
    RouteServices,
    SandboxDep,
    base_url,
)

__all__ = ["router"]

router = APIRouter(route_class=LazyAPIRoute, redirect_slashes=False)


@router.get(
    "/sandbox/acs/{payment_id}",
    response_class=HTMLResponse,
    responses={
        **PUBLIC_ERRORS,
        404: {
            "description": "No challenge waits at this address: a page saying so",
            "content": {"text/html": {"schema": {"type": "string"}}},
        },
    },
    summary="The challenge page",
)
def challenge_page(
    payment_id: PaymentId,
    correlation_id: Annotated[
        str, Query(alias="correlationId", max_length=64, pattern=r"^[\x20-\x7e]*$")
    ],
    request: Request,
    sandbox: SandboxDep,
) -> Response:
    """The buyer's challenge: a one-time code field; the documented code passes.

    The form posts to ``/sandbox/acs/{payment_id}/challenge``, which answers with a
    page that posts the signed ``pares`` back to the hosted checkout's 3DS return.
    """
    p = payments
    with sandbox.db.read() as conn:
        row = conn.execute(
            sa.select(p.c.amount, p.c.card_mask, p.c.correlation_id).where(
                p.c.id == payment_id, p.c.status == "pending_3ds"
            )
        ).first()
    # The page shows an amount and a card mask: only to whoever holds the challenge's
    # correlationId, and only while the challenge waits for an answer.
    if row is None or not hmac.compare_digest(
        str(row.correlation_id or "").encode(), correlation_id.encode()
    ):
        return _no_challenge(request, sandbox)
    return render(
        "acs.html",
        page_language(request),
        switch_url=here(request),
        static_base=base_url(request, sandbox),
        payment_id=payment_id,
        correlation_id=correlation_id,
        amount=int(row.amount),
        card_mask=row.card_mask,
        challenge_code=CHALLENGE_CODE,
    )


def _no_challenge(request: Request, sandbox: RouteServices) -> Response:
    return ended_page(request, "no-challenge")


@router.post(
    "/sandbox/acs/{payment_id}/challenge",
    response_class=HTMLResponse,
    include_in_schema=False,
)
async def challenge_form(
    payment_id: PaymentId,
    request: Request,
    sandbox: SandboxDep,
) -> Response:
    """The challenge form's submit: sign the outcome, send it back to the checkout page."""
    try:
        data = parse_body(await request.body())
        secret = sandbox.acs_secret
        correlation_id, code = data.get("correlationId", "")[:64], data.get("code", "").strip()[:32]
        payload = await sandbox.db.aread(
            lambda conn: acs.challenge_result(conn, secret, payment_id, correlation_id, code)
        )
    except (FormError, ServiceError):
        return _no_challenge(request, sandbox)
    lang = page_language(request)
    return_to = await sandbox.db.aread(lambda conn: flow.acs_return_url(conn, payment_id))
    return render(
        "acs_done.html",
        lang,
        static_base=base_url(request, sandbox),
        return_to=with_lang(return_to, lang.code) if return_to else None,
        passed=payload["result"] == "Y",
        pares=payload["pares"],
        correlation_id=payload["correlationId"],
        payment_id=payment_id,
    )


@router.post(
    "/sandbox/acs/{payment_id}",
    response_model=ChallengeResponse,
    responses=PUBLIC_ERRORS,
    summary="Answer the challenge, get a signed pares",
)
def answer_challenge(
    payment_id: PaymentId,
    body: ChallengeRequest,
    request: Request,
    sandbox: SandboxDep,
) -> Response:
    """``Y`` for the challenge card with the right code, ``N`` otherwise; signed either way."""
    with sandbox.db.read() as conn:
        payload = acs.challenge_result(
            conn, sandbox.acs_secret, payment_id, body.correlationId, body.code
        )
    return Reply.json(200, payload).to_response(request_id_of(request.scope))
