"""Routes: the buyer portal under /v1/public/subscriptions/{hash}; the hash is the bearer."""

from __future__ import annotations

from fastapi import APIRouter, Request
from starlette.responses import Response

from workbench.sandbox.errors import request_id_of
from workbench.sandbox.idempotency import Work, check_key, fingerprint
from workbench.sandbox.lazy_routes import LazyAPIRoute
from workbench.sandbox.replies import Reply
from workbench.sandbox.routing import (
    ADDRESS_LIMITED_ERRORS,
    IdemKey,
    IdempotentPost,
    RouteServices,
    SandboxDep,
    base_url,
    checkout_base,
)
from workbench.sandbox.subscriptions import service
from workbench.sandbox.subscriptions.models import (
    EmptyRequest,
    PublicCancelRequest,
    PublicCancelResponse,
    PublicView,
    UpdateCardSession,
)

__all__ = ["router"]

router = APIRouter(route_class=LazyAPIRoute, redirect_slashes=False)

_BASE = "/v1/public/subscriptions/{hash}"


async def _idempotent(
    request: Request,
    sandbox: RouteServices,
    public_hash: str,
    tail: str,
    key: str | None,
    digest: str,
    work: Work,
) -> Response:
    """Run a portal POST under its Idempotency-Key, keyed on (public hash, endpoint, key).

    The endpoint is recorded as its template, so the hash (the buyer's bearer) is kept
    only as the SHA-256 in the caller's key.
    """
    check_key(key)  # before any database work, as every idempotent POST
    request_id = request_id_of(request.scope)
    caller = await sandbox.db.aread(
        lambda conn: service.portal_caller(conn, public_hash, request_id)
    )
    door = IdempotentPost(sandbox.db, caller, _BASE + tail, key, sandbox.sealer)
    return await door(lambda conn, _caller: work(conn), digest=digest)


@router.get(
    "/v1/public/subscriptions/{hash}",
    response_model=PublicView,
    responses=ADDRESS_LIMITED_ERRORS,
    summary="Buyer portal: the public view (no signature)",
)
def view(hash: str, request: Request, sandbox: SandboxDep) -> Response:
    """Only the public fields; 404 for an unknown hash."""
    with sandbox.db.read() as conn:
        payload = service.public_get(conn, hash)
    return Reply.json(200, payload).to_response(request_id_of(request.scope))


@router.post(
    "/v1/public/subscriptions/{hash}/cancel",
    response_model=PublicCancelResponse,
    responses=ADDRESS_LIMITED_ERRORS,
    summary="Buyer portal: cancel (atPeriodEnd defaults to true)",
)
async def cancel(
    hash: str,
    request: Request,
    sandbox: SandboxDep,
    body: PublicCancelRequest | None = None,
    idempotency_key: IdemKey = None,
) -> Response:
    """publicHash, status, cancelAtPeriodEnd."""
    req = body or PublicCancelRequest()
    return await _idempotent(
        request,
        sandbox,
        hash,
        "/cancel",
        idempotency_key,
        fingerprint(req),
        lambda conn: service.public_cancel(conn, hash, req),
    )


@router.post(
    "/v1/public/subscriptions/{hash}/update-card-session",
    status_code=201,
    response_model=UpdateCardSession,
    responses=ADDRESS_LIMITED_ERRORS,
    summary="Buyer portal: a card_update_only checkout session",
)
async def update_card_session(
    hash: str,
    request: Request,
    sandbox: SandboxDep,
    body: EmptyRequest | None = None,
    idempotency_key: IdemKey = None,
) -> Response:
    """sessionId, checkoutUrl, expiresAt only; a retry with the same Idempotency-Key
    answers the same session instead of making a second one."""
    checkout = checkout_base(request, sandbox)
    portal = base_url(request, sandbox)
    return await _idempotent(
        request,
        sandbox,
        hash,
        "/update-card-session",
        idempotency_key,
        fingerprint(body),
        lambda conn: service.update_card_session(conn, hash, checkout, portal, sandbox.sealer),
    )
