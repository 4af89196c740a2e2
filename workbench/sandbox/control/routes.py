"""Routes: the sandbox-only controls under ``/sandbox/``; signed, scoped to the caller.

Merchants on demand (``/sandbox/merchants``) are the exception: made and listed without
a signature (by anyone on a sandbox only this machine reaches, with the admin token
beyond: `workbench.sandbox.admin`), deleted by the merchant's own signed request or
with the admin token.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any

import anyio.to_thread
import sqlalchemy as sa
from fastapi import APIRouter, Body, Path, Query, Request
from pydantic import BaseModel
from starlette.responses import Response

from workbench.sandbox import events
from workbench.sandbox.clock import iso, wall_now
from workbench.sandbox.context import Caller, request_state
from workbench.sandbox.control import merchants
from workbench.sandbox.control import service as control
from workbench.sandbox.control.models import (
    AdvanceRequest,
    AuthorizationLifetimeRequest,
    CreateMerchantRequest,
    FailNextRequest,
    LatencyRequest,
    MerchantCreated,
    RateLimitRequest,
    WebhookRequest,
)
from workbench.sandbox.errors import ServiceError, request_id_of
from workbench.sandbox.fixtures import BUILT_IN_MERCHANTS
from workbench.sandbox.idempotency import fingerprint
from workbench.sandbox.lazy_routes import LazyAPIRoute
from workbench.sandbox.payments import expiry
from workbench.sandbox.refunds import service as refunds
from workbench.sandbox.replies import Reply
from workbench.sandbox.routing import (
    ERROR_RESPONSES,
    SIGNED,
    CallerDep,
    IdempotentPost,
    PostDep,
    PostWork,
    RouteServices,
    SandboxDep,
    caller_of,
)
from workbench.sandbox.targets import webhook_target

__all__ = ["router"]

router = APIRouter(
    route_class=LazyAPIRoute, prefix="/sandbox", redirect_slashes=False, responses=ERROR_RESPONSES
)
_EXTRA: dict[str, Any] = {"openapi_extra": {"security": SIGNED}}


def _ok(caller: Caller, payload: Any) -> Response:
    return Reply.json(200, payload).to_response(caller.request_id)


# Every idempotent control POST goes through the one door (`routing.IdempotentPost`):
# those whose work is one transaction as any route's (`planned`), those whose work runs
# the reconciler, which makes transactions of its own, in its claimed mode (`claimed`).


async def _in_thread(run: Callable[[], Any]) -> Reply:
    """``run()``'s payload in a worker thread: the reconciler's work, which waits on its
    lease."""
    return Reply.json(200, await anyio.to_thread.run_sync(run))


async def _answer(post: IdempotentPost, work: PostWork, body: BaseModel | None) -> Reply:
    """``work``'s reply, once per Idempotency-Key: the client retries a POST after a 5xx,
    a 429 or a lost connection."""
    return await post.planned(
        lambda _plan, caller: lambda conn: work(conn, caller), digest=fingerprint(body)
    )


@router.get("/fixtures", summary="Merchant, store, customers, saved cards, test cards", **_EXTRA)
def fixtures(sandbox: SandboxDep, caller: CallerDep) -> Response:
    """The calling merchant's built-in data."""
    with sandbox.db.read() as conn:
        return _ok(caller, control.fixtures_view(conn, caller.merchant_id, sandbox.sealer))


@router.post("/clock/advance", summary="Advance the business clock", **_EXTRA)
async def advance(body: AdvanceRequest, sandbox: SandboxDep, post: PostDep) -> Response:
    """Runs the reconciler work that falls due, in order; returns the new business time."""

    # The target time is fixed when the Idempotency-Key is first claimed, so the request
    # replayed after a crash finishes the same advance: it never adds its seconds again.
    def target(conn: sa.Connection, caller: Caller) -> bytes:
        return control.advance_target(conn, caller.merchant_id, body.seconds)

    def run(fixed: bytes, merchant_id: str) -> dict[str, str | None]:
        try:
            moment = sandbox.reconciler.advance_to(merchant_id, control.target_of(fixed))
        except TimeoutError as exc:
            raise ServiceError("SVC-GW-5030", str(exc), headers={"Retry-After": "1"}) from exc
        return {"businessTime": iso(moment)}

    reply = await post.claimed(
        lambda fixed, caller: _in_thread(lambda: run(fixed, caller.merchant_id)),
        digest=fingerprint(body),
        plan=target,
    )
    return reply.to_response(post.caller.request_id)


@router.post("/reconciler/tick", summary="Run one reconciler pass now", **_EXTRA)
async def tick(sandbox: SandboxDep, post: PostDep) -> Response:
    """Items processed per kind of work."""

    def run(merchant_id: str) -> dict[str, Any]:
        return {"processed": sandbox.reconciler.tick(merchant_id)}

    reply = await post.claimed(
        lambda _fixed, caller: _in_thread(lambda: run(caller.merchant_id)),
        digest=fingerprint(None),
    )
    return reply.to_response(post.caller.request_id)


@router.post("/settle", summary="Settle every in-flight refund now", **_EXTRA)
async def settle(sandbox: SandboxDep, post: PostDep) -> Response:
    """Then deliver due webhooks."""

    def run(merchant_id: str) -> dict[str, int]:
        count = refunds.settle_all(sandbox.db, merchant_id)
        sandbox.reconciler.tick(merchant_id)
        return {"settled": count}

    reply = await post.claimed(
        lambda _fixed, caller: _in_thread(lambda: run(caller.merchant_id)),
        digest=fingerprint(None),
    )
    return reply.to_response(post.caller.request_id)


@router.post("/reset", summary="Delete this merchant's objects and restore fixtures", **_EXTRA)
async def reset(request: Request, sandbox: SandboxDep, post: PostDep) -> Response:
    """Counts of deleted rows per table. The reset's own Idempotency-Key record is
    written with its answer, after the deletion, so a retry replays it.

    A built-in merchant's reset on a sandbox reachable beyond loopback also needs the
    admin token (``Authorization: Bearer``): the demo merchant is everyone's there."""
    if post.caller.merchant_id in BUILT_IN_MERCHANTS:
        _require_admin(request, sandbox, "resetting a built-in merchant")

    def work(conn: sa.Connection, caller: Caller) -> Reply:
        deleted = control.reset_merchant(conn, caller.merchant_id, sandbox.tables)
        return Reply.json(200, {"deleted": deleted})

    reply = await _answer(post, work, None)
    await _forget_buckets(sandbox, post.caller.merchant_id)
    return reply.to_response(post.caller.request_id)


async def _forget_buckets(sandbox: RouteServices, merchant_id: str) -> None:
    """The merchant's rate-limit buckets start full again (a shared limiter's are rows)."""
    await sandbox.db.in_thread(lambda: sandbox.limiter.forget(merchant_id))


@router.get("/events", summary="Events of this merchant, with delivery state", **_EXTRA)
def list_events(
    sandbox: SandboxDep,
    caller: CallerDep,
    type: Annotated[str | None, Query(max_length=60, pattern=r"^[a-z0-9_.]+$")] = None,
) -> Response:
    """Oldest first."""
    with sandbox.db.read() as conn:
        body = events.list_events_json(conn, caller.merchant_id, type)
    return Reply(200, body).to_response(caller.request_id)


@router.get(
    "/events/{event_id}/deliveries",
    summary="One event's delivery state and every attempt made",
    **_EXTRA,
)
def event_deliveries(
    event_id: Annotated[str, Path(pattern=r"^evt_[A-Za-z0-9]{1,60}$")],
    sandbox: SandboxDep,
    caller: CallerDep,
) -> Response:
    """Attempts oldest first (status code, error), and when the next one falls due."""
    with sandbox.db.read() as conn:
        found = events.list_deliveries(conn, caller.merchant_id, event_id)
    if found is None:
        raise ServiceError("SVC-GW-4004", "no such event")
    return _ok(caller, found)


@router.post("/fail-next", summary="Make the next request fail (429, 500, timeout)", **_EXTRA)
async def fail_next(body: FailNextRequest, post: PostDep) -> Response:
    """Applies to the next non-control request of this merchant, once."""
    mode = f"timeout:{body.seconds}" if body.mode == "timeout" else body.mode

    def work(conn: sa.Connection, caller: Caller) -> Reply:
        control.set_fail_next(conn, caller.merchant_id, mode)
        return Reply.json(200, {"failNext": body.mode})

    reply = await _answer(post, work, body)
    return reply.to_response(post.caller.request_id)


@router.post("/latency", summary="Add simulated latency to every response", **_EXTRA)
async def latency(body: LatencyRequest, post: PostDep) -> Response:
    """0 turns it off."""

    def work(conn: sa.Connection, caller: Caller) -> Reply:
        control.set_latency(conn, caller.merchant_id, body.milliseconds)
        return Reply.json(200, {"latencyMs": body.milliseconds})

    reply = await _answer(post, work, body)
    return reply.to_response(post.caller.request_id)


@router.post("/rate-limit", summary="Set this merchant's rate limit", **_EXTRA)
async def rate_limit(body: RateLimitRequest, sandbox: SandboxDep, post: PostDep) -> Response:
    """For every worker; ``perSecond`` null restores the configured default."""

    def work(conn: sa.Connection, caller: Caller) -> Reply:
        control.set_rate_limit(conn, caller.merchant_id, body.perSecond, body.burst)
        return Reply.json(200, {"perSecond": body.perSecond, "burst": body.burst})

    reply = await _answer(post, work, body)
    await _forget_buckets(sandbox, post.caller.merchant_id)
    return reply.to_response(post.caller.request_id)


@router.post(
    "/authorization-lifetime",
    summary="Set how long this merchant's authorizations wait for a capture",
    **_EXTRA,
)
async def authorization_lifetime(body: AuthorizationLifetimeRequest, post: PostDep) -> Response:
    """Business-time seconds (default 7 days; null restores it). Applies to every
    authorization of the merchant, those already made included; past it, the next
    reconciler pass, capture or void voids the payment."""

    def work(conn: sa.Connection, caller: Caller) -> Reply:
        span = expiry.set_lifetime(conn, caller.merchant_id, body.seconds)
        return Reply.json(200, {"seconds": int(span.total_seconds())})

    reply = await _answer(post, work, body)
    return reply.to_response(post.caller.request_id)


@router.put("/webhook", summary="Set the store's webhook URL", **_EXTRA)
async def webhook(body: WebhookRequest, sandbox: SandboxDep, caller: CallerDep) -> Response:
    """Events created from now on go there (an address of a refused kind: 400)."""
    allow = sandbox.config.webhook_allow_private
    url = webhook_target("url", body.url, allow_private=allow)
    await sandbox.db.atransact(lambda conn: control.set_webhook(conn, caller.store_id, url))
    return _ok(caller, {"url": url})


# --- merchants on demand ------------------------------------------------------------

#: Making and listing merchants: no signature, the admin token where one is needed.
_ADMIN_OR_OPEN: dict[str, Any] = {
    "openapi_extra": {"security": [{"AdminToken": []}, {}]},
}
_MERCHANT_ERRORS: dict[int | str, dict[str, Any]] = {
    k: v for k, v in ERROR_RESPONSES.items() if k in (400, 401, 404, 405, 409)
}
_NO_STORE = {"Cache-Control": "no-store"}
_NO_NAME = CreateMerchantRequest()


def _require_admin(request: Request, sandbox: RouteServices, what: str) -> None:
    if not sandbox.admin.allows(request.headers.get("authorization")):
        raise ServiceError(
            "SVC-GW-1006",
            f"{what} on a sandbox reachable beyond loopback needs the admin token "
            "(Authorization: Bearer <token>)",
        )


@router.post(
    "/merchants",
    status_code=201,
    response_model=MerchantCreated,
    summary="Make a merchant of your own: store, keys, customers, clock (secrets shown once)",
    responses={**_MERCHANT_ERRORS, 429: ERROR_RESPONSES[429]},
    **_ADMIN_OR_OPEN,
)
async def create_merchant(
    request: Request,
    sandbox: SandboxDep,
    body: Annotated[CreateMerchantRequest, Body()] = _NO_NAME,
) -> Response:
    """Its secret key and webhook secret appear in this answer only. Counted per client
    address (429 past the limit)."""
    _require_admin(request, sandbox, "making a merchant")
    name = body.name
    made = await sandbox.db.atransact(
        lambda conn: merchants.create_merchant(conn, name, sandbox.sealer, wall_now())
    )
    reply = Reply.json(201, made.as_json())
    reply.headers.update(_NO_STORE)
    return reply.to_response(request_id_of(request.scope))


@router.get(
    "/merchants",
    summary="Every merchant: id, name, made, last used (no secret)",
    responses=_MERCHANT_ERRORS,
    **_ADMIN_OR_OPEN,
)
def list_merchants(request: Request, sandbox: SandboxDep) -> Response:
    """Oldest first, the built-in ones first of all."""
    _require_admin(request, sandbox, "listing merchants")
    with sandbox.db.read() as conn:
        items = merchants.list_merchants(conn)
    return Reply.json(200, {"items": items}).to_response(request_id_of(request.scope))


@router.delete(
    "/merchants/{merchant_id}",
    summary="Delete a merchant and all its data (its keys stop working at once)",
    responses=_MERCHANT_ERRORS,
    openapi_extra={"security": [*SIGNED, {"AdminToken": []}]},
)
async def delete_merchant(
    merchant_id: Annotated[str, Path(pattern=r"^[A-Za-z0-9_-]{1,64}$")],
    request: Request,
    sandbox: SandboxDep,
) -> Response:
    """Signed with the merchant's own key, or (without X-Api-Key) with the admin token.
    A built-in merchant: 409."""
    if request_state(request.scope).caller is not None:
        caller = await caller_of(request)
        if caller.merchant_id != merchant_id and not sandbox.admin.allows(
            request.headers.get("authorization")
        ):
            raise ServiceError("SVC-GW-4004", "no such merchant for this API key")
    else:
        _require_admin(request, sandbox, "deleting a merchant without its own signed request")
    if merchant_id in BUILT_IN_MERCHANTS:
        raise ServiceError("SVC-GW-4090", f"{merchant_id} is a built-in merchant; it stays")
    deleted = await sandbox.db.atransact(
        lambda conn: merchants.delete_merchant(conn, merchant_id, sandbox.tables)
    )
    if deleted is None:
        raise ServiceError("SVC-GW-4004", "no such merchant")
    await _forget_buckets(sandbox, merchant_id)
    payload = {"merchantId": merchant_id, "deleted": deleted}
    return Reply.json(200, payload).to_response(request_id_of(request.scope))
