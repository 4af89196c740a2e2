"""Routes: hosted-checkout session creation."""

from __future__ import annotations

from fastapi import APIRouter, Request
from starlette.responses import Response

from workbench.sandbox.idempotency import fingerprint
from workbench.sandbox.lazy_routes import LazyAPIRoute
from workbench.sandbox.routing import (
    ERROR_RESPONSES,
    PostDep,
    SandboxDep,
    checkout_base,
    signed,
)
from workbench.sandbox.sessions import service as sessions
from workbench.sandbox.sessions.models import SessionRequest, SessionResponse
from workbench.sandbox.targets import webhook_target

__all__ = ["router"]

router = APIRouter(route_class=LazyAPIRoute, redirect_slashes=False)


@router.post(
    "/v1/payments/sessions",
    status_code=201,
    response_model=SessionResponse,
    **signed(
        summary="Create a hosted-checkout session",
        responses={
            **ERROR_RESPONSES,
            200: {"model": SessionResponse, "description": "The transactionId fence's answer"},
        },
    ),
)
async def create_session(
    body: SessionRequest, request: Request, sandbox: SandboxDep, post: PostDep
) -> Response:
    """201 with the session; the same transactionId and payload again answers 200 with it.

    A ``callbackUrl`` whose address the sandbox does not send to is refused (400).
    """
    allow = sandbox.config.webhook_allow_private
    callback = webhook_target("callbackUrl", body.callbackUrl, allow_private=allow)
    if callback != body.callbackUrl:
        body = body.model_copy(update={"callbackUrl": callback})
    base = checkout_base(request, sandbox)
    return await post(
        lambda conn, caller: sessions.create_session(conn, caller, body, base),
        digest=fingerprint(body),
    )
