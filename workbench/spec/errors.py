"""Every error code the service and the sandbox return, as data.

The spec names four codes (SVC-GW-1001..1003, SVC-GW-2001) and leaves the rest
"not shown"; the others below are the sandbox's documented decisions. The
statuses keep to the card charge's list (400, 401, 404, 429, and 409 from the
idempotency section), plus 405 for a method no route takes, 431 for a request head
over the sandbox's cap, and the 5xx a merchant asks for with the fail-next control:
a decline is a 400, never 402. The
sandbox answers with these, the client's exception classes dispatch on them,
and the guide's error table is generated from this module.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["ERRORS", "ErrorCode", "error_code"]


@dataclass(frozen=True, slots=True)
class ErrorCode:
    """One error code: HTTP status, cause, and what the caller should do.

    Attributes:
        code: the ``code`` field of the error envelope.
        http_status: the HTTP status it is sent with.
        title: a short name.
        cause: what makes the service answer with it.
        action: what the caller should do.
        retryable: whether retrying the *same* request (same Idempotency-Key) can succeed.
        origin: ``spec`` when the spec names the code, ``sandbox`` when it is our decision.
    """

    code: str
    http_status: int
    title: str
    cause: str
    action: str
    retryable: bool
    origin: str = "sandbox"


_ALL = (
    ErrorCode(
        "SVC-GW-1001",
        401,
        "Timestamp invalid",
        "X-Timestamp missing, malformed, carrying an offset instead of Z, or more than "
        "5 minutes from the server clock.",
        "Send the current UTC time as YYYY-MM-DDTHH:MM:SSZ; fix the local clock.",
        False,
        "spec",
    ),
    ErrorCode(
        "SVC-GW-1002",
        401,
        "Signature mismatch",
        "X-Signature does not match the HMAC-SHA256 of the canonical string.",
        "Run `workbench sign --expect` on the request to find which part differs.",
        False,
        "spec",
    ),
    ErrorCode(
        "SVC-GW-1003",
        401,
        "API key invalid",
        "X-Api-Key missing, unknown or revoked.",
        "Use an active public key of this environment.",
        False,
        "spec",
    ),
    ErrorCode(
        "SVC-GW-1004",
        429,
        "Rate limited",
        "Too many requests for this API key.",
        "Wait for Retry-After seconds, then retry with the same Idempotency-Key.",
        True,
    ),
    ErrorCode(
        "SVC-GW-1005",
        401,
        "Signature already used",
        "Only with the sandbox's opt-in strict replay mode (`workbench sandbox "
        "--strict-replay`): this exact signature was accepted before, so the request is a "
        "replay. The spec's own scheme accepts a signature again within its 5 minutes.",
        "Sign every request afresh and never resend captured bytes; two different "
        "requests with the same method, path and body in the same second share a "
        "signature, so wait a second before the second one.",
        False,
    ),
    ErrorCode(
        "SVC-GW-1006",
        401,
        "Admin token required",
        "Only on a sandbox reachable beyond loopback (a team host): making, listing or "
        "deleting merchants, or resetting a built-in one, without the admin token.",
        "Send `Authorization: Bearer <admin token>`, the token the sandbox printed at its "
        "first start or was given with --admin-token.",
        False,
    ),
    ErrorCode(
        "SVC-GW-2001",
        409,
        "Idempotency conflict",
        "Idempotency-Key (or a card charge's transactionId) reused with a different payload.",
        "Do not retry: use a new key for a new request.",
        False,
        "spec",
    ),
    ErrorCode(
        "SVC-GW-2002",
        409,
        "Request in progress",
        "A request with this Idempotency-Key is still being processed.",
        "Retry with backoff under the same Idempotency-Key.",
        True,
    ),
    ErrorCode(
        "SVC-GW-4000",
        400,
        "Malformed request",
        "The body is not valid JSON, not a JSON object, names a key twice, or is not sent "
        "as application/json; or a header is malformed.",
        "Send one JSON object, each key once, as Content-Type: application/json, "
        "with well-formed headers.",
        False,
    ),
    ErrorCode(
        "SVC-GW-4004",
        404,
        "Not found",
        "No such route, or no such object for this merchant.",
        "Check the identifier and the API key's merchant.",
        False,
    ),
    ErrorCode(
        "SVC-GW-4005",
        405,
        "Method not allowed",
        "The route exists but not with this HTTP method.",
        "Use the method the route documents.",
        False,
    ),
    ErrorCode(
        "SVC-GW-4013",
        400,
        "Body too large",
        "The request body exceeds the size the service reads (64 KiB).",
        "Send a smaller body.",
        False,
    ),
    ErrorCode(
        "SVC-GW-4031",
        431,
        "Request headers too large",
        "The request line and headers exceed the size the sandbox reads (32 KiB by "
        "default); the connection is closed after this answer.",
        "Send fewer or smaller headers (large cookies on the sandbox's host are the usual cause).",
        False,
    ),
    ErrorCode(
        "SVC-GW-4090",
        409,
        "Built-in merchant",
        "The sandbox's built-in merchants (the demo merchant and the second one) cannot "
        "be deleted.",
        "Delete only merchants made with POST /sandbox/merchants; reset a built-in one.",
        False,
    ),
    ErrorCode(
        "SVC-GW-5000",
        500,
        "Internal error",
        "The service failed unexpectedly (the sandbox's fail-next control can cause it).",
        "Retry with backoff under the same Idempotency-Key; quote the requestId if it persists.",
        True,
    ),
    ErrorCode(
        "SVC-GW-5030",
        503,
        "Service unavailable",
        "The service is temporarily unavailable.",
        "Retry with backoff under the same Idempotency-Key.",
        True,
    ),
    ErrorCode(
        "SVC-VAL-4001",
        400,
        "Validation failed",
        "A field is missing, of the wrong type, out of range, or unknown; the message names it.",
        "Fix the named field.",
        False,
    ),
    ErrorCode(
        "SVC-VAL-4002",
        400,
        "Raw card data rejected",
        "A card number was sent where a vault token (tok_) is required.",
        "Tokenize the card first and send the tok_ token.",
        False,
    ),
    ErrorCode(
        "SVC-PAY-3001",
        400,
        "Card declined",
        "The issuer declined the charge; the payment is recorded as declined.",
        "Ask the buyer for another card; do not retry the same card.",
        False,
    ),
    ErrorCode(
        "SVC-PAY-3002",
        400,
        "Insufficient funds",
        "The card has insufficient funds; the payment is recorded as declined.",
        "Ask the buyer for another card or a smaller amount.",
        False,
    ),
    ErrorCode(
        "SVC-PAY-3003",
        400,
        "3-D Secure failed",
        "The buyer failed the 3-D Secure challenge; the payment is recorded as failed.",
        "Start a new charge; the buyer may try again.",
        False,
    ),
    ErrorCode(
        "SVC-PAY-4001",
        400,
        "3-D Secure assertion invalid",
        "pares or correlationId is forged, mismatched or for another payment.",
        "Post back exactly what the ACS returned for this payment.",
        False,
    ),
    ErrorCode(
        "SVC-PAY-4002",
        400,
        "Refund exceeds refundable amount",
        "The refund amount is more than refundableAmount (in-flight refunds count).",
        "Refund at most refundableAmount.",
        False,
    ),
    ErrorCode(
        "SVC-PAY-4090",
        409,
        "Payment state conflict",
        "The payment's state does not allow this action (capture a voided payment, "
        "refund an authorized one, void a captured one...).",
        "Read the payment and act on its current state.",
        False,
    ),
    ErrorCode(
        "SVC-SES-4090",
        409,
        "Session not active",
        "The checkout session has expired or is already completed.",
        "Create a new session.",
        False,
    ),
    ErrorCode(
        "SVC-SUB-4090",
        409,
        "Subscription state conflict",
        "The subscription's state does not allow this action (resume an active one, "
        "pause a cancelled one, retry one that is not past_due...).",
        "Read the subscription and act on its current state.",
        False,
    ),
)

#: Every error code by its ``code`` string.
ERRORS: dict[str, ErrorCode] = {e.code: e for e in _ALL}


def error_code(code: str) -> ErrorCode:
    """Look up an error code.

    Raises:
        KeyError: for a code neither the spec nor the sandbox defines.
    """
    return ERRORS[code]
