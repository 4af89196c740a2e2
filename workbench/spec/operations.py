"""The service's operations: one row per endpoint, with the name tools know it by.

The ``operationId`` of each endpoint in the sandbox's OpenAPI document comes from here,
so a client generated from the document (or a mock server, a test tool) calls them
``createCheckoutSession``, ``chargeCard``... whatever the Python functions behind them
are called. Names are the spec's own words for what each endpoint does ("Creates a
hosted-checkout session", "Charges a card by vault token"), verb first, in lower camel
case. ``tag`` is the area the guide and Swagger UI group the endpoint under.

Rows whose ``origin`` is ``"spec"`` are the endpoints the service interface lists
(``POST /v1/cards/tokens`` is named there though its shape is not shown); the
``"sandbox"`` rows are the sandbox's own control and 3-D Secure routes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

__all__ = ["OPERATIONS", "TAGS", "Operation", "operation"]

#: Areas, in the order the document lists them, with what each holds.
TAGS: dict[str, str] = {
    "Checkout sessions": "Hosted checkout: a session the buyer pays on the provider's page.",
    "Payments": "Card charges by vault token, 3-D Secure, capture, void, refund, retrieval.",
    "Cards": "Exchanging a card number for a `tok_` vault token.",
    "Subscriptions": "Recurring charges of a saved card: create, list, pause, cancel, retry.",
    "Buyer portal": "What a buyer may do with the subscription's public hash, unsigned.",
    "Sandbox controls": "The sandbox's own routes: merchants, clock, reconciler, fixtures, "
    "failures.",
    "Sandbox 3-D Secure": "The simulated card issuer's challenge (the ACS).",
}


@dataclass(frozen=True, slots=True)
class Operation:
    """One endpoint: its method and path template, its ``operationId`` and its area."""

    method: Literal["GET", "POST", "PUT", "DELETE"]
    path: str
    operation_id: str
    tag: str
    origin: Literal["spec", "sandbox"] = "spec"


_SESSIONS, _PAYMENTS, _CARDS = "Checkout sessions", "Payments", "Cards"
_SUBS, _PORTAL = "Subscriptions", "Buyer portal"
_CONTROL, _ACS = "Sandbox controls", "Sandbox 3-D Secure"
_PAY = "/v1/payments/{id}"
_SUB = "/v1/subscriptions/{id}"
_PUB = "/v1/public/subscriptions/{hash}"

#: Every operation, in the order the OpenAPI document lists them.
OPERATIONS: tuple[Operation, ...] = (
    Operation("POST", "/v1/payments/sessions", "createCheckoutSession", _SESSIONS),
    Operation("POST", "/v1/payments/card", "chargeCard", _PAYMENTS),
    Operation("POST", f"{_PAY}/3ds-callback", "completeThreeDSChallenge", _PAYMENTS),
    Operation("POST", f"{_PAY}/capture", "capturePayment", _PAYMENTS),
    Operation("POST", f"{_PAY}/void", "voidPayment", _PAYMENTS),
    Operation("POST", f"{_PAY}/refund", "refundPayment", _PAYMENTS),
    Operation("GET", _PAY, "getPayment", _PAYMENTS),
    Operation("GET", f"{_PAY}/public-status", "getPaymentPublicStatus", _PAYMENTS),
    Operation("POST", "/v1/cards/tokens", "createCardToken", _CARDS),
    Operation("GET", "/sandbox/fixtures", "getSandboxFixtures", _CONTROL, "sandbox"),
    Operation("POST", "/sandbox/clock/advance", "advanceSandboxClock", _CONTROL, "sandbox"),
    Operation("POST", "/sandbox/reconciler/tick", "runSandboxReconciler", _CONTROL, "sandbox"),
    Operation("POST", "/sandbox/settle", "settleSandboxRefunds", _CONTROL, "sandbox"),
    Operation("POST", "/sandbox/reset", "resetSandboxMerchant", _CONTROL, "sandbox"),
    Operation("GET", "/sandbox/events", "listSandboxEvents", _CONTROL, "sandbox"),
    Operation(
        "GET",
        "/sandbox/events/{event_id}/deliveries",
        "listSandboxEventDeliveries",
        _CONTROL,
        "sandbox",
    ),
    Operation("POST", "/sandbox/fail-next", "failNextSandboxRequest", _CONTROL, "sandbox"),
    Operation("POST", "/sandbox/latency", "setSandboxLatency", _CONTROL, "sandbox"),
    Operation("POST", "/sandbox/rate-limit", "setSandboxRateLimit", _CONTROL, "sandbox"),
    Operation(
        "POST",
        "/sandbox/authorization-lifetime",
        "setSandboxAuthorizationLifetime",
        _CONTROL,
        "sandbox",
    ),
    Operation("PUT", "/sandbox/webhook", "setSandboxWebhook", _CONTROL, "sandbox"),
    Operation("POST", "/sandbox/merchants", "createSandboxMerchant", _CONTROL, "sandbox"),
    Operation("GET", "/sandbox/merchants", "listSandboxMerchants", _CONTROL, "sandbox"),
    Operation(
        "DELETE", "/sandbox/merchants/{merchant_id}", "deleteSandboxMerchant", _CONTROL, "sandbox"
    ),
    Operation("GET", "/sandbox/acs/{payment_id}", "getSandboxChallengePage", _ACS, "sandbox"),
    Operation("POST", "/sandbox/acs/{payment_id}", "answerSandboxChallenge", _ACS, "sandbox"),
    Operation("POST", "/v1/subscriptions", "createSubscription", _SUBS),
    Operation("GET", "/v1/subscriptions", "listSubscriptions", _SUBS),
    Operation("GET", _SUB, "getSubscription", _SUBS),
    Operation("GET", f"{_SUB}/charges", "listSubscriptionCharges", _SUBS),
    Operation("POST", f"{_SUB}/cancel", "cancelSubscription", _SUBS),
    Operation("POST", f"{_SUB}/pause", "pauseSubscription", _SUBS),
    Operation("POST", f"{_SUB}/resume", "resumeSubscription", _SUBS),
    Operation("POST", f"{_SUB}/retry", "retrySubscription", _SUBS),
    Operation("POST", f"{_SUB}/charge-now", "chargeSubscriptionNow", _SUBS),
    Operation("GET", _PUB, "getPortalSubscription", _PORTAL),
    Operation("POST", f"{_PUB}/cancel", "cancelPortalSubscription", _PORTAL),
    Operation("POST", f"{_PUB}/update-card-session", "createPortalCardUpdateSession", _PORTAL),
)

_BY_ROUTE: dict[tuple[str, str], Operation] = {(op.method, op.path): op for op in OPERATIONS}


def operation(method: str, path: str) -> Operation:
    """The operation served at ``method`` ``path`` (a path template, ``{id}`` and all).

    Raises:
        LookupError: no such operation is listed.
    """
    try:
        return _BY_ROUTE[(method.upper(), path)]
    except KeyError:
        raise LookupError(
            f"{method.upper()} {path} is not in workbench.spec.operations.OPERATIONS: "
            "give it an operationId and a tag there"
        ) from None
