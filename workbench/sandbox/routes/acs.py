"""Routes: the sandbox's minimal 3-D Secure challenge (ACS) page; no signature, the buyer's."""

from __future__ import annotations

import html
from typing import Annotated

from fastapi import APIRouter, Depends, Path, Query, Request
from pydantic import BaseModel, Field
from starlette.responses import HTMLResponse, Response

from workbench.sandbox import acs
from workbench.sandbox.cards import CHALLENGE_CODE
from workbench.sandbox.context import sandbox_of
from workbench.sandbox.errors import request_id_of
from workbench.sandbox.replies import Reply
from workbench.sandbox.routes._common import PUBLIC_ERRORS
from workbench.sandbox.runtime import Sandbox
from workbench.sandbox.schemas import StrictRequest

__all__ = ["ChallengeRequest", "ChallengeResponse", "router"]

router = APIRouter(tags=["sandbox-acs"], redirect_slashes=False)


class ChallengeRequest(StrictRequest):
    """The buyer's answer to the challenge."""

    correlationId: Annotated[str, Field(min_length=1, max_length=64)]
    code: Annotated[str, Field(max_length=32)]


class ChallengeResponse(BaseModel):
    """The signed outcome to post to /v1/payments/{id}/3ds-callback."""

    paymentId: str
    correlationId: str
    pares: str
    result: str


@router.get(
    "/sandbox/acs/{payment_id}",
    response_class=HTMLResponse,
    responses=PUBLIC_ERRORS,
    summary="The challenge page (minimal)",
)
def challenge_page(
    payment_id: Annotated[str, Path(pattern=r"^[A-Za-z0-9_-]{1,64}$")],
    correlation_id: Annotated[
        str, Query(alias="correlationId", max_length=64, pattern=r"^[\x20-\x7e]*$")
    ],
) -> HTMLResponse:
    """A minimal form asking for the one-time code (the hosted checkout pages replace it)."""
    pid, cid = html.escape(payment_id), html.escape(correlation_id)
    return HTMLResponse(
        "<!doctype html><meta charset=utf-8><title>3-D Secure</title>"
        "<h1>Sandbox 3-D Secure</h1>"
        f"<p>Enter the one-time code (the test code is {CHALLENGE_CODE}).</p>"
        f'<form id=acs data-payment="{pid}" data-correlation="{cid}">'
        "<input name=code autocomplete=one-time-code required> <button>Submit</button></form>"
        "<pre id=out></pre><script>"
        "document.getElementById('acs').addEventListener('submit', async (e) => {"
        "e.preventDefault(); const f = e.target;"
        "const r = await fetch('/sandbox/acs/' + encodeURIComponent(f.dataset.payment), {"
        "method: 'POST', headers: {'Content-Type': 'application/json'},"
        "body: JSON.stringify({correlationId: f.dataset.correlation, code: f.code.value})});"
        "document.getElementById('out').textContent = JSON.stringify(await r.json(), null, 2);"
        "});</script>"
    )


@router.post(
    "/sandbox/acs/{payment_id}",
    response_model=ChallengeResponse,
    responses=PUBLIC_ERRORS,
    summary="Answer the challenge, get a signed pares",
)
def answer_challenge(
    payment_id: Annotated[str, Path(pattern=r"^[A-Za-z0-9_-]{1,64}$")],
    body: ChallengeRequest,
    request: Request,
    sandbox: Annotated[Sandbox, Depends(sandbox_of)],
) -> Response:
    """``Y`` for the challenge card with the right code, ``N`` otherwise; signed either way."""
    with sandbox.db.read() as conn:
        payload = acs.challenge_result(
            conn, sandbox.acs_secret, payment_id, body.correlationId, body.code
        )
    return Reply.json(200, payload).to_response(request_id_of(request.scope))
