"""Routes: the signed /v1/subscriptions endpoints a merchant calls."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query
from starlette.responses import Response

from workbench.sandbox.idempotency import fingerprint
from workbench.sandbox.lazy_routes import LazyAPIRoute
from workbench.sandbox.replies import Reply
from workbench.sandbox.routing import (
    CallerDep,
    PostDep,
    SandboxDep,
    signed,
)
from workbench.sandbox.subscriptions import service
from workbench.sandbox.subscriptions.cursor import ensure_secret
from workbench.sandbox.subscriptions.models import (
    CancelRequest,
    CancelResponse,
    ChargeList,
    ChargeNowReceipt,
    EmptyRequest,
    RetryResponse,
    StatusResponse,
    SubscriptionList,
    SubscriptionObject,
    SubscriptionRequest,
)
from workbench.sandbox.subscriptions.service import ListFilters
from workbench.spec import limits

__all__ = ["router"]

router = APIRouter(route_class=LazyAPIRoute, redirect_slashes=False)

Status = Literal["trialing", "active", "past_due", "paused", "charging", "cancelled", "expired"]
_ID = Annotated[str, Query(min_length=1, max_length=64)]
_WHEN = Annotated[
    str | None,
    Query(
        min_length=1,
        max_length=40,
        description="ISO 8601 UTC timestamp ending in Z, compared with createdAt",
    ),
]


@router.post(
    "/v1/subscriptions",
    status_code=201,
    response_model=SubscriptionObject,
    **signed(summary="Create a subscription"),
)
async def create(body: SubscriptionRequest, post: PostDep) -> Response:
    """201 with the subscription and its publicHash (shown only here)."""
    return await post(
        lambda conn, caller: service.create(conn, caller, body), digest=fingerprint(body)
    )


@router.get(
    "/v1/subscriptions",
    response_model=SubscriptionList,
    **signed(summary="List subscriptions (keyset-paginated, creation order)"),
)
def list_subscriptions(
    sandbox: SandboxDep,
    caller: CallerDep,
    storeId: Annotated[str | None, Query(min_length=1, max_length=64)] = None,
    customerId: Annotated[str | None, Query(min_length=1, max_length=64)] = None,
    status: Status | None = None,
    from_: Annotated[
        _WHEN, Query(alias="from", description="createdAt >= from (inclusive)")
    ] = None,
    to: Annotated[_WHEN, Query(description="createdAt < to (exclusive)")] = None,
    limit: Annotated[
        int, Query(ge=1, le=limits.SUBSCRIPTION_PAGE_MAX)
    ] = limits.SUBSCRIPTION_PAGE_DEFAULT,
    cursor: Annotated[str | None, Query(min_length=1, max_length=200)] = None,
) -> Response:
    """One page, oldest first; ``nextCursor`` is null on the last page."""
    filters = ListFilters(storeId, customerId, status, from_, to)
    secret = ensure_secret(sandbox.db)
    with sandbox.db.read() as conn:
        body = service.list_page(conn, caller.merchant_id, filters, limit, cursor, secret)
    return Reply(200, body).to_response(caller.request_id)


@router.get(
    "/v1/subscriptions/{id}",
    response_model=SubscriptionObject,
    response_model_exclude_none=True,
    **signed(summary="Retrieve a subscription"),
)
def get(id: str, sandbox: SandboxDep, caller: CallerDep) -> Response:
    """The subscription without its publicHash (404 for another merchant's)."""
    with sandbox.db.read() as conn:
        payload = service.get(conn, caller, id)
    return Reply.json(200, payload).to_response(caller.request_id)


@router.get(
    "/v1/subscriptions/{id}/charges",
    response_model=ChargeList,
    **signed(summary="A subscription's charges"),
)
def charges(id: str, sandbox: SandboxDep, caller: CallerDep) -> Response:
    """Every charge attempt, approved or declined, oldest first."""
    with sandbox.db.read() as conn:
        payload = service.charges(conn, caller, id)
    return Reply.json(200, payload).to_response(caller.request_id)


@router.post(
    "/v1/subscriptions/{id}/cancel",
    response_model=CancelResponse,
    **signed(summary="Cancel now or at the period end"),
)
async def cancel(id: str, body: CancelRequest, post: PostDep) -> Response:
    """atPeriodEnd=true keeps it running until nextChargeAt; false cancels at once."""
    return await post(
        lambda conn, caller: service.cancel(conn, caller, id, body), digest=fingerprint(body)
    )


def _action(name: str, summary: str, model: type[Any], status_code: int = 200) -> None:
    work = getattr(service, name.replace("-", "_"))

    async def endpoint(id: str, body: EmptyRequest, post: PostDep) -> Response:
        return await post(lambda conn, caller: work(conn, caller, id), digest=fingerprint(body))

    endpoint.__name__ = name.replace("-", "_")
    endpoint.__doc__ = summary
    router.add_api_route(
        f"/v1/subscriptions/{{id}}/{name}",
        endpoint,
        methods=["POST"],
        status_code=status_code,
        response_model=model,
        **signed(summary=summary),
    )


_action("pause", "Pause (the reconciler ignores it until resumed)", StatusResponse)
_action("resume", "Resume (charged on the next reconciler tick)", StatusResponse)
_action("retry", "Retry a past_due charge on the next tick", RetryResponse)
_action(
    "charge-now", "Charge now (queued; poll until status leaves charging)", ChargeNowReceipt, 202
)
