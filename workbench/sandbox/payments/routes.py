"""Routes: card charge, 3DS callback, capture, void, retrieval, public status, card tokens."""

from __future__ import annotations

import hashlib
import json

import sqlalchemy as sa
from fastapi import APIRouter, Request
from pydantic import ValidationError
from starlette.responses import Response
from starlette.types import Receive, Scope, Send

from workbench.sandbox import cards
from workbench.sandbox.clock import business_now
from workbench.sandbox.context import (
    Caller,
    base_url_of,
    header_text,
    request_headers,
    request_state,
)
from workbench.sandbox.errors import request_id_of
from workbench.sandbox.idempotency import Work, fingerprint
from workbench.sandbox.lazy_routes import LazyAPIRoute
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
    TokenRequest,
    TokenResponse,
    VoidRequest,
    VoidResponse,
)
from workbench.sandbox.replies import Reply
from workbench.sandbox.routing import (
    ADDRESS_LIMITED_ERRORS,
    CHARGE_ERRORS,
    CallerDep,
    IdemKey,
    IdempotentPost,
    PaymentId,
    PostDep,
    RouteServices,
    SandboxDep,
    raw_path,
    signed,
)
from workbench.sandbox.storage import ReadPlan
from workbench.spec import is_uuid4

__all__ = ["CardChargeRoute", "card_charge_route", "router"]

router = APIRouter(route_class=LazyAPIRoute, redirect_slashes=False)

METHOD = "POST"
PATH = "/v1/payments/card"


async def charge_card(
    body: ChargeRequest,
    request: Request,
    sandbox: SandboxDep,
    caller: CallerDep,
    idempotency_key: IdemKey = None,
) -> Response:
    """201 with the new payment (pending_3ds with correlationId and acsUrl on a challenge);
    200 with the payment as it is now when the transactionId fence finds the same charge."""
    return await _charged(request.scope, sandbox, caller, body, idempotency_key, raw_path(request))


async def _charged(
    scope: Scope,
    sandbox: RouteServices,
    caller: Caller,
    body: ChargeRequest,
    key: str | None,
    path: str,
) -> Response:
    """`charge_card`'s answer, from the request's scope (``path``: as sent)."""
    base = base_url_of(scope, sandbox.config.public_base_url)
    digest = payments.fingerprint(body)  # here, not under the write lock

    def declare(plan: ReadPlan, caller: Caller) -> Work:
        reads = payments.ChargeReads(plan, caller, body)
        return lambda conn: payments.charge(conn, caller, body, base, digest, reads)

    door = IdempotentPost(sandbox.db, caller, path, key, sandbox.sealer)
    reply = await door.planned(declare, digest=digest)
    return reply.to_response(caller.request_id)


class CardChargeRoute(LazyAPIRoute):
    """``POST /v1/payments/card``: `charge_card`, called straight for a well-formed request.

    The card charge is the sandbox's hottest route, and FastAPI's dependency solving and
    body handling cost a good part of it. The edge has already read the body, parsed it
    by the one JSON rule and authenticated the caller (`RequestState`): when the request
    is one FastAPI would accept as it is (JSON sent as ``application/json``, a body
    `ChargeRequest` validates, no or a UUID v4 Idempotency-Key, the path exactly as
    routed), this route calls its endpoint with those values itself. Anything else goes
    the ordinary FastAPI way, to the same endpoint, which gives each error exactly as for
    any route. The OpenAPI operation is FastAPI's, from the same endpoint and models.

    A caller authenticated on a guessed key record (PostgreSQL) is confirmed inside the
    charge's own transaction (`Caller.confirm`), or by `CallerDep` the ordinary way.
    """

    async def handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Call `charge_card` with the request's values, or leave it to FastAPI."""
        direct = _well_formed(scope)
        if direct is None:
            await super().handle(scope, receive, send)
            return
        caller, body, key = direct
        sandbox: RouteServices = scope["app"].state.sandbox
        # The path as sent is the route's own (`_well_formed`); no `Request` is needed.
        response = await _charged(scope, sandbox, caller, body, key, PATH)
        await response(scope, receive, send)


def _well_formed(scope: Scope) -> tuple[Caller, ChargeRequest, str | None] | None:
    """The charge's caller, body and key when FastAPI would take them as they are."""
    if scope["method"] != METHOD:  # FastAPI's way answers 405 (the edge refused it first)
        return None
    state = request_state(scope)
    caller, data = state.caller, state.json
    if caller is None or not isinstance(data, dict) or scope.get("query_string"):
        return None
    if scope.get("raw_path", _PATH) != _PATH:
        return None
    headers = request_headers(scope)
    if headers.get(b"content-type", b"").split(b";")[0].strip() != b"application/json":
        return None
    key = header_text(headers.get(b"idempotency-key"))
    if key is not None and not is_uuid4(key):
        return None
    try:
        return caller, ChargeRequest.model_validate(data), key
    except ValidationError:
        return None


_PATH = b"/v1/payments/card"
router.add_api_route(
    "/v1/payments/card",
    charge_card,
    methods=["POST"],
    route_class_override=CardChargeRoute,
    status_code=201,
    response_model=ChargeResponse,
    **signed(
        summary="Charge a card by vault token",
        responses={
            **CHARGE_ERRORS,
            200: {"model": ChargeResponse, "description": "The transactionId fence's answer"},
        },
    ),
)
#: The card charge's route, which the app also puts first in its route table
#: (`workbench.sandbox.routing.FirstInLine`).
card_charge_route: CardChargeRoute = next(
    route for route in router.routes if isinstance(route, CardChargeRoute)
)


@router.post(
    "/v1/payments/{id}/3ds-callback",
    response_model=ThreeDSCallbackResponse,
    **signed(summary="Complete a 3-D Secure challenge"),
)
async def threeds_callback(
    id: PaymentId, body: ThreeDSCallbackRequest, sandbox: SandboxDep, post: PostDep
) -> Response:
    """Verify the signed pares; a duplicate returns the first result unchanged."""
    secret = sandbox.acs_secret
    return await post(
        lambda conn, caller: threeds.threeds_callback(conn, secret, caller, id, body),
        digest=fingerprint(body),
    )


@router.post(
    "/v1/payments/{id}/capture",
    response_model=CaptureResponse,
    **signed(summary="Capture a preauthorization (full amount)"),
)
async def capture(id: PaymentId, post: PostDep, body: CaptureRequest | None = None) -> Response:
    """Captured; a repeat on a captured payment answers the same."""
    return await post(
        lambda conn, caller: payments.capture(conn, caller, id), digest=fingerprint(body)
    )


@router.post(
    "/v1/payments/{id}/void",
    response_model=VoidResponse,
    **signed(summary="Void an authorization"),
)
async def void(id: PaymentId, post: PostDep, body: VoidRequest | None = None) -> Response:
    """Voided; the reason travels on the payment.voided event."""
    req = body or VoidRequest()
    return await post(
        lambda conn, caller: payments.void(conn, caller, id, req), digest=fingerprint(req)
    )


@router.get(
    "/v1/payments/{id}", response_model=PaymentObject, **signed(summary="Retrieve a payment")
)
def get_payment(id: PaymentId, sandbox: SandboxDep, caller: CallerDep) -> Response:
    """The payment object (404 for another merchant's payment)."""
    with sandbox.db.read() as conn:
        payload = payments.get_payment(conn, caller, id)
    return Reply.json(200, payload).to_response(caller.request_id)


@router.get(
    "/v1/payments/{id}/public-status",
    response_model=PublicStatus,
    responses=ADDRESS_LIMITED_ERRORS,
    summary="Buyer-safe status (no signature)",
)
def public_status(id: PaymentId, request: Request, sandbox: SandboxDep) -> Response:
    """Only paymentId and status; the payment id is the bearer."""
    with sandbox.db.read() as conn:
        payload = payments.public_status(conn, id)
    return Reply.json(200, payload).to_response(request_id_of(request.scope))


@router.post(
    "/v1/cards/tokens",
    status_code=201,
    response_model=TokenResponse,
    **signed(summary="Exchange a card number for a tok_ vault token"),
)
async def create_token(body: TokenRequest, post: PostDep) -> Response:
    """The number is checked (digits, Luhn, expiry) and never stored or echoed."""

    def work(conn: sa.Connection, caller: Caller) -> Reply:
        now = business_now(conn, caller.merchant_id)
        payload = cards.tokenize_checked(
            conn, caller.merchant_id, body.cardNumber, body.expiryMonth, body.expiryYear, now
        )
        return Reply.json(201, payload)

    return await post(work, digest=_shown_card_digest(body))


def _shown_card_digest(body: TokenRequest) -> str:
    """ "The same payload" for a tokenisation, from what the token's answer shows anyway.

    Only the card mask's digits (first six, last four), the length, the expiry and the
    name: a hash of the whole body would be a hash of card number and CVC, kept for
    24 hours, from which the number is recovered in seconds given the mask.
    """
    digits = body.cardNumber.replace(" ", "").replace("-", "")
    shown = {
        "bin": digits[:6],
        "last4": digits[-4:],
        "length": len(digits),
        "expiry": [body.expiryMonth, body.expiryYear],
        "name": body.cardholderName,
    }
    return hashlib.sha256(json.dumps(shown, sort_keys=True).encode()).hexdigest()
