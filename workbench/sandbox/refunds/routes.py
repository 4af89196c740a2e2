"""Route: the refund of a captured payment (``POST /v1/payments/{id}/refund``)."""

from __future__ import annotations

from fastapi import APIRouter, Request
from starlette.responses import Response

from workbench.sandbox.idempotency import fingerprint, run_idempotent
from workbench.sandbox.refunds import service as refunds
from workbench.sandbox.refunds.models import RefundRequest, RefundResponse
from workbench.sandbox.routing import (
    ERROR_RESPONSES,
    SIGNED,
    CallerDep,
    IdemKey,
    PaymentId,
    SandboxDep,
    raw_path,
)

__all__ = ["router"]

router = APIRouter(redirect_slashes=False)


@router.post(
    "/v1/payments/{id}/refund",
    response_model=RefundResponse,
    responses={
        **ERROR_RESPONSES,
        202: {"model": RefundResponse, "description": "Refund in flight"},
    },
    openapi_extra={"security": SIGNED},
    summary="Refund a captured payment",
)
async def refund(
    id: PaymentId,
    request: Request,
    sandbox: SandboxDep,
    caller: CallerDep,
    body: RefundRequest | None = None,
    idempotency_key: IdemKey = None,
) -> Response:
    """200 when settled at once, 202 while in flight (retry with the same Idempotency-Key)."""
    req = body or RefundRequest()
    reply = await run_idempotent(
        sandbox.db,
        caller,
        raw_path(request),
        idempotency_key,
        lambda conn: refunds.refund(
            conn, caller, id, req, settle_seconds=sandbox.config.refund_settle_seconds
        ),
        digest=fingerprint(req),
        refresh=refunds.refund_reply,
    )
    return reply.to_response(caller.request_id)
