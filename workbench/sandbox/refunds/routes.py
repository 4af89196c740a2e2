"""Route: the refund of a captured payment (``POST /v1/payments/{id}/refund``)."""

from __future__ import annotations

from fastapi import APIRouter
from starlette.responses import Response

from workbench.sandbox.idempotency import fingerprint
from workbench.sandbox.lazy_routes import LazyAPIRoute
from workbench.sandbox.refunds import service as refunds
from workbench.sandbox.refunds.models import RefundRequest, RefundResponse
from workbench.sandbox.routing import (
    ERROR_RESPONSES,
    PaymentId,
    PostDep,
    SandboxDep,
    signed,
)

__all__ = ["router"]

router = APIRouter(route_class=LazyAPIRoute, redirect_slashes=False)


@router.post(
    "/v1/payments/{id}/refund",
    response_model=RefundResponse,
    **signed(
        summary="Refund a captured payment",
        responses={
            **ERROR_RESPONSES,
            202: {"model": RefundResponse, "description": "Refund in flight"},
        },
    ),
)
async def refund(
    id: PaymentId, sandbox: SandboxDep, post: PostDep, body: RefundRequest | None = None
) -> Response:
    """200 when settled at once, 202 while in flight (retry with the same Idempotency-Key)."""
    req = body or RefundRequest()
    settle = sandbox.config.refund_settle_seconds
    return await post(
        lambda conn, caller: refunds.refund(conn, caller, id, req, settle_seconds=settle),
        digest=fingerprint(req),
        refresh=refunds.refund_reply,
    )
