"""Route: card tokenization (``POST /v1/cards/tokens``; the spec leaves its shape to us)."""

from __future__ import annotations

import hashlib
import json
from typing import Annotated

import sqlalchemy as sa
from fastapi import APIRouter, Depends, Header, Request
from starlette.responses import Response

from workbench.sandbox import cards
from workbench.sandbox.clock import business_now
from workbench.sandbox.context import Caller, caller_of
from workbench.sandbox.idempotency import run_idempotent
from workbench.sandbox.payments.models import TokenRequest, TokenResponse
from workbench.sandbox.replies import Reply
from workbench.sandbox.routing import ERROR_RESPONSES, SIGNED, raw_path
from workbench.sandbox.runtime import SandboxRuntime, sandbox_of

__all__ = ["router"]

router = APIRouter(redirect_slashes=False)


@router.post(
    "/v1/cards/tokens",
    status_code=201,
    response_model=TokenResponse,
    responses=ERROR_RESPONSES,
    openapi_extra={"security": SIGNED},
    summary="Exchange a card number for a tok_ vault token",
)
def create_token(
    body: TokenRequest,
    request: Request,
    sandbox: Annotated[SandboxRuntime, Depends(sandbox_of)],
    caller: Annotated[Caller, Depends(caller_of)],
    idempotency_key: Annotated[str | None, Header(alias="Idempotency-Key", max_length=255)] = None,
) -> Response:
    """The number is checked (digits, Luhn, expiry) and never stored or echoed."""

    def work(conn: sa.Connection) -> Reply:
        now = business_now(conn, caller.merchant_id)
        payload = cards.tokenize_checked(
            conn, caller.merchant_id, body.cardNumber, body.expiryMonth, body.expiryYear, now
        )
        return Reply.json(201, payload)

    digest = _shown_card_digest(body)
    reply = run_idempotent(
        sandbox.db, caller, "POST", raw_path(request), idempotency_key, work, digest=digest
    )
    return reply.to_response(caller.request_id)


def _shown_card_digest(body: TokenRequest) -> str:
    """ "The same payload" for a tokenisation, from what the token's answer shows anyway.

    Only the card mask's digits (first six, last four), the length, the expiry and the
    name: a hash of the whole body would be a hash of card number and CVC, kept for
    24 hours, from which the number is recovered in seconds given the mask.
    """
    digits = body.cardNumber.replace(" ", "").replace("-", "")
    shown = {
        "bin": digits[:6],
        "last4": digits[-4:],
        "length": len(digits),
        "expiry": [body.expiryMonth, body.expiryYear],
        "name": body.cardholderName,
    }
    return hashlib.sha256(json.dumps(shown, sort_keys=True).encode()).hexdigest()
