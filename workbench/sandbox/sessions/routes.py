"""Routes: hosted-checkout session creation."""

from __future__ import annotations

from fastapi import APIRouter, Request
from starlette.responses import Response

from workbench.sandbox.idempotency import fingerprint, run_idempotent
from workbench.sandbox.routing import (
    ERROR_RESPONSES,
    SIGNED,
    CallerDep,
    IdemKey,
    SandboxDep,
    checkout_base,
    raw_path,
)
from workbench.sandbox.sessions import service as sessions
from workbench.sandbox.sessions.models import SessionRequest, SessionResponse

__all__ = ["router"]

router = APIRouter(redirect_slashes=False)


@router.post(
    "/v1/payments/sessions",
    status_code=201,
    response_model=SessionResponse,
    responses={
        **ERROR_RESPONSES,
        200: {"model": SessionResponse, "description": "The transactionId fence's answer"},
    },
    openapi_extra={"security": SIGNED},
    summary="Create a hosted-checkout session",
)
async def create_session(
    body: SessionRequest,
    request: Request,
    sandbox: SandboxDep,
    caller: CallerDep,
    idempotency_key: IdemKey = None,
) -> Response:
    """201 with the session; the same transactionId and payload again answers 200 with it."""
    base = checkout_base(request, sandbox)
    reply = await run_idempotent(
        sandbox.db,
        caller,
        raw_path(request),
        idempotency_key,
        lambda conn: sessions.create_session(conn, caller, body, base),
        digest=fingerprint(body),
    )
    return reply.to_response(caller.request_id)
