"""Routes: the sandbox-only controls under ``/sandbox/``; signed, scoped to the caller."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any

from fastapi import APIRouter, Path, Query, Request
from pydantic import BaseModel
from starlette.responses import Response

from workbench.sandbox import events
from workbench.sandbox.clock import iso
from workbench.sandbox.context import Caller
from workbench.sandbox.control import service as control
from workbench.sandbox.control.models import (
    AdvanceRequest,
    FailNextRequest,
    LatencyRequest,
    RateLimitRequest,
    WebhookRequest,
)
from workbench.sandbox.errors import ServiceError
from workbench.sandbox.idempotency import fingerprint, run_claimed
from workbench.sandbox.refunds import service as refunds
from workbench.sandbox.replies import Reply
from workbench.sandbox.routing import (
    ERROR_RESPONSES,
    SIGNED,
    CallerDep,
    IdemKey,
    Running,
    SandboxDep,
    raw_path,
)

__all__ = ["router"]

router = APIRouter(prefix="/sandbox", redirect_slashes=False, responses=ERROR_RESPONSES)
_EXTRA: dict[str, Any] = {"openapi_extra": {"security": SIGNED}}


def _ok(caller: Caller, payload: Any) -> Response:
    return Reply.json(200, payload).to_response(caller.request_id)


def _once(
    request: Request,
    sandbox: Running,
    caller: Caller,
    key: str | None,
    body: BaseModel | None,
    action: Callable[[], Any],
) -> Response:
    """``action()``'s payload, once per Idempotency-Key: the client retries a POST after a
    5xx, a 429 or a lost connection, and a retried advance must not move the clock twice."""
    reply = run_claimed(
        sandbox.db,
        caller,
        "POST",
        raw_path(request),
        key,
        lambda: Reply.json(200, action()),
        digest=fingerprint(body),
    )
    return reply.to_response(caller.request_id)


@router.get("/fixtures", summary="Merchant, store, customers, saved cards, test cards", **_EXTRA)
def fixtures(sandbox: SandboxDep, caller: CallerDep) -> Response:
    """The calling merchant's built-in data."""
    with sandbox.db.read() as conn:
        return _ok(caller, control.fixtures_view(conn, caller.merchant_id))


@router.post("/clock/advance", summary="Advance the business clock", **_EXTRA)
def advance(
    body: AdvanceRequest,
    request: Request,
    sandbox: SandboxDep,
    caller: CallerDep,
    idempotency_key: IdemKey = None,
) -> Response:
    """Runs the reconciler work that falls due, in order; returns the new business time."""

    def run() -> dict[str, str | None]:
        try:
            moment = sandbox.reconciler.advance(caller.merchant_id, body.seconds)
        except TimeoutError as exc:
            raise ServiceError("SVC-GW-5030", str(exc), headers={"Retry-After": "1"}) from exc
        return {"businessTime": iso(moment)}

    return _once(request, sandbox, caller, idempotency_key, body, run)


@router.post("/reconciler/tick", summary="Run one reconciler pass now", **_EXTRA)
def tick(
    request: Request, sandbox: SandboxDep, caller: CallerDep, idempotency_key: IdemKey = None
) -> Response:
    """Items processed per kind of work."""
    return _once(
        request,
        sandbox,
        caller,
        idempotency_key,
        None,
        lambda: {"processed": sandbox.reconciler.tick(caller.merchant_id)},
    )


@router.post("/settle", summary="Settle every in-flight refund now", **_EXTRA)
def settle(
    request: Request, sandbox: SandboxDep, caller: CallerDep, idempotency_key: IdemKey = None
) -> Response:
    """Then deliver due webhooks."""

    def run() -> dict[str, int]:
        count = refunds.settle_all(sandbox.db, caller.merchant_id)
        sandbox.reconciler.tick(caller.merchant_id)
        return {"settled": count}

    return _once(request, sandbox, caller, idempotency_key, None, run)


@router.post("/reset", summary="Delete this merchant's objects and restore fixtures", **_EXTRA)
def reset(
    request: Request, sandbox: SandboxDep, caller: CallerDep, idempotency_key: IdemKey = None
) -> Response:
    """Counts of deleted rows per table (the reset's own Idempotency-Key record included)."""

    def run() -> dict[str, Any]:
        with sandbox.db.write() as conn:
            deleted = control.reset_merchant(conn, caller.merchant_id)
        sandbox.limiter.forget(caller.merchant_id)
        return {"deleted": deleted}

    return _once(request, sandbox, caller, idempotency_key, None, run)


@router.get("/events", summary="Events of this merchant, with delivery state", **_EXTRA)
def list_events(
    sandbox: SandboxDep,
    caller: CallerDep,
    type: Annotated[str | None, Query(max_length=60, pattern=r"^[a-z0-9_.]+$")] = None,
) -> Response:
    """Oldest first."""
    with sandbox.db.read() as conn:
        return _ok(caller, {"items": events.list_events(conn, caller.merchant_id, type)})


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
def fail_next(
    body: FailNextRequest,
    request: Request,
    sandbox: SandboxDep,
    caller: CallerDep,
    idempotency_key: IdemKey = None,
) -> Response:
    """Applies to the next non-control request of this merchant, once."""

    def run() -> dict[str, str]:
        mode = f"timeout:{body.seconds}" if body.mode == "timeout" else body.mode
        with sandbox.db.write() as conn:
            control.set_fail_next(conn, caller.merchant_id, mode)
        return {"failNext": body.mode}

    return _once(request, sandbox, caller, idempotency_key, body, run)


@router.post("/latency", summary="Add simulated latency to every response", **_EXTRA)
def latency(
    body: LatencyRequest,
    request: Request,
    sandbox: SandboxDep,
    caller: CallerDep,
    idempotency_key: IdemKey = None,
) -> Response:
    """0 turns it off."""

    def run() -> dict[str, int]:
        with sandbox.db.write() as conn:
            control.set_latency(conn, caller.merchant_id, body.milliseconds)
        return {"latencyMs": body.milliseconds}

    return _once(request, sandbox, caller, idempotency_key, body, run)


@router.post("/rate-limit", summary="Set this merchant's rate limit", **_EXTRA)
def rate_limit(
    body: RateLimitRequest,
    request: Request,
    sandbox: SandboxDep,
    caller: CallerDep,
    idempotency_key: IdemKey = None,
) -> Response:
    """For every worker; ``perSecond`` null restores the configured default."""

    def run() -> dict[str, Any]:
        with sandbox.db.write() as conn:
            control.set_rate_limit(conn, caller.merchant_id, body.perSecond, body.burst)
        sandbox.limiter.forget(caller.merchant_id)
        return {"perSecond": body.perSecond, "burst": body.burst}

    return _once(request, sandbox, caller, idempotency_key, body, run)


@router.put("/webhook", summary="Set the store's webhook URL", **_EXTRA)
def webhook(body: WebhookRequest, sandbox: SandboxDep, caller: CallerDep) -> Response:
    """Events created from now on go there."""
    with sandbox.db.write() as conn:
        control.set_webhook(conn, caller.store_id, body.url)
    return _ok(caller, {"url": body.url})
