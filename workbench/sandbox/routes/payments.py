"""Routes: card charge, 3DS callback, capture, void, refund, payment retrieval, public status."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Path, Request
from starlette.responses import Response

from workbench.sandbox.errors import request_id_of
from workbench.sandbox.idempotency import fingerprint, run_idempotent_async
from workbench.sandbox.payments import service as payments
from workbench.sandbox.payments import threeds
from workbench.sandbox.payments.models import (
    CaptureRequest,
    CaptureResponse,
    ChargeRequest,
    ChargeResponse,
    PaymentObject,
    PublicStatus,
    ThreeDSCallbackRequest,
    ThreeDSCallbackResponse,
    VoidRequest,
    VoidResponse,
)
from workbench.sandbox.refunds import service as refunds
from workbench.sandbox.refunds.models import RefundRequest, RefundResponse
from workbench.sandbox.replies import Reply
from workbench.sandbox.routing import (
    CHARGE_ERRORS,
    ERROR_RESPONSES,
    PUBLIC_ERRORS,
    SIGNED,
    CallerDep,
    IdemKey,
    SandboxDep,
    raw_path,
)
from workbench.sandbox.runtime import base_url

__all__ = ["router"]

router = APIRouter(redirect_slashes=False)

PaymentId = Annotated[str, Path(pattern=r"^[A-Za-z0-9_-]{1,64}$")]


def _signed(**extra: Any) -> dict[str, Any]:
    return {"responses": ERROR_RESPONSES, "openapi_extra": {"security": SIGNED}} | extra


@router.post(
    "/v1/payments/card",
    status_code=201,
    response_model=ChargeResponse,
    **_signed(
        summary="Charge a card by vault token",
        responses={
            **CHARGE_ERRORS,
            200: {"model": ChargeResponse, "description": "The transactionId fence's answer"},
        },
    ),
)
async def charge_card(
    body: ChargeRequest,
    request: Request,
    sandbox: SandboxDep,
    caller: CallerDep,
    idempotency_key: IdemKey = None,
) -> Response:
    """201 with the new payment (pending_3ds with correlationId and acsUrl on a challenge);
    200 with the payment as it is now when the transactionId fence finds the same charge."""
    base = base_url(request, sandbox)
    digest = payments.fingerprint(body)  # here, not under the write lock
    reply = await run_idempotent_async(
        sandbox.db,
        caller,
        raw_path(request),
        idempotency_key,
        lambda conn: payments.charge(conn, caller, body, base, digest),
        digest=digest,
    )
    return reply.to_response(caller.request_id)


@router.post(
    "/v1/payments/{id}/3ds-callback",
    response_model=ThreeDSCallbackResponse,
    **_signed(summary="Complete a 3-D Secure challenge"),
)
async def threeds_callback(
    id: PaymentId,
    body: ThreeDSCallbackRequest,
    request: Request,
    sandbox: SandboxDep,
    caller: CallerDep,
    idempotency_key: IdemKey = None,
) -> Response:
    """Verify the signed pares; a duplicate returns the first result unchanged."""
    reply = await run_idempotent_async(
        sandbox.db,
        caller,
        raw_path(request),
        idempotency_key,
        lambda conn: threeds.threeds_callback(conn, sandbox.acs_secret, caller, id, body),
        digest=fingerprint(body),
    )
    return reply.to_response(caller.request_id)


@router.post(
    "/v1/payments/{id}/capture",
    response_model=CaptureResponse,
    **_signed(summary="Capture a preauthorization (full amount)"),
)
async def capture(
    id: PaymentId,
    request: Request,
    sandbox: SandboxDep,
    caller: CallerDep,
    body: CaptureRequest | None = None,
    idempotency_key: IdemKey = None,
) -> Response:
    """Captured; a repeat on a captured payment answers the same."""
    reply = await run_idempotent_async(
        sandbox.db,
        caller,
        raw_path(request),
        idempotency_key,
        lambda conn: payments.capture(conn, caller, id),
        digest=fingerprint(body),
    )
    return reply.to_response(caller.request_id)


@router.post(
    "/v1/payments/{id}/void",
    response_model=VoidResponse,
    **_signed(summary="Void an authorization"),
)
async def void(
    id: PaymentId,
    request: Request,
    sandbox: SandboxDep,
    caller: CallerDep,
    body: VoidRequest | None = None,
    idempotency_key: IdemKey = None,
) -> Response:
    """Voided; the reason travels on the payment.voided event."""
    req = body or VoidRequest()
    reply = await run_idempotent_async(
        sandbox.db,
        caller,
        raw_path(request),
        idempotency_key,
        lambda conn: payments.void(conn, caller, id, req),
        digest=fingerprint(req),
    )
    return reply.to_response(caller.request_id)


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
    reply = await run_idempotent_async(
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


@router.get(
    "/v1/payments/{id}", response_model=PaymentObject, **_signed(summary="Retrieve a payment")
)
def get_payment(id: PaymentId, sandbox: SandboxDep, caller: CallerDep) -> Response:
    """The payment object (404 for another merchant's payment)."""
    with sandbox.db.read() as conn:
        payload = payments.get_payment(conn, caller, id)
    return Reply.json(200, payload).to_response(caller.request_id)


@router.get(
    "/v1/payments/{id}/public-status",
    response_model=PublicStatus,
    responses=PUBLIC_ERRORS,
    summary="Buyer-safe status (no signature)",
)
def public_status(id: PaymentId, request: Request, sandbox: SandboxDep) -> Response:
    """Only paymentId and status; the payment id is the bearer."""
    with sandbox.db.read() as conn:
        payload = payments.public_status(conn, id)
    return Reply.json(200, payload).to_response(request_id_of(request.scope))
