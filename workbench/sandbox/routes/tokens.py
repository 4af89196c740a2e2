"""Route: card tokenization (``POST /v1/cards/tokens``; the spec leaves its shape to us)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends
from starlette.responses import Response

from workbench.sandbox import cards
from workbench.sandbox.clock import business_now
from workbench.sandbox.context import Caller, caller_of, sandbox_of
from workbench.sandbox.replies import Reply
from workbench.sandbox.routes._common import ERROR_RESPONSES, SIGNED
from workbench.sandbox.runtime import Sandbox
from workbench.sandbox.schemas import TokenRequest, TokenResponse

__all__ = ["router"]

router = APIRouter(tags=["tokens"], redirect_slashes=False)


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
    sandbox: Annotated[Sandbox, Depends(sandbox_of)],
    caller: Annotated[Caller, Depends(caller_of)],
) -> Response:
    """The number is checked (digits, Luhn, expiry) and never stored or echoed."""
    with sandbox.db.write() as conn:
        now = business_now(conn, caller.merchant_id)
        payload = cards.tokenize_checked(
            conn, caller.merchant_id, body.cardNumber, body.expiryMonth, body.expiryYear, now
        )
    return Reply.json(201, payload).to_response(caller.request_id)
