"""The client's errors: one small tree, dispatched on the envelope's ``code`` first.

::

    WorkbenchError
    ├── APIConnectionError                 no HTTP response (refused, reset, DNS...)
    │   └── APITimeoutError                the request timed out
    └── APIError                           the service answered with an error envelope
        ├── BadRequestError                400
        │   ├── InvalidRequestError        SVC-VAL-4001 (the message names the field)
        │   ├── RawCardDataError           SVC-VAL-4002
        │   ├── ThreeDSecureAssertionError SVC-PAY-4001
        │   ├── RefundAmountError          SVC-PAY-4002
        │   └── RequestTooLargeError       SVC-GW-4013 (a 413 is read the same)
        ├── AuthenticationError            401
        │   ├── TimestampError             SVC-GW-1001
        │   ├── SignatureError             SVC-GW-1002
        │   └── APIKeyError                SVC-GW-1003
        ├── DeclineError                   SVC-PAY-3xxx, sent as 400 (a 402 is read the same)
        │   ├── CardDeclinedError          SVC-PAY-3001
        │   ├── InsufficientFundsError     SVC-PAY-3002
        │   └── ThreeDSecureFailedError    SVC-PAY-3003
        ├── NotFoundError                  404 (SVC-GW-4004)
        ├── MethodNotAllowedError          405 (SVC-GW-4005)
        ├── ConflictError                  409
        │   ├── IdempotencyConflictError   SVC-GW-2001 (never retried)
        │   ├── RequestInProgressError     SVC-GW-2002 (retried under the same key)
        │   └── StateConflictError         the object's state forbids the action
        │       ├── PaymentStateError      SVC-PAY-4090
        │       ├── SessionStateError      SVC-SES-4090
        │       └── SubscriptionStateError SVC-SUB-4090
        ├── RateLimitError                 429 (SVC-GW-1004)
        ├── ServerError                    5xx (SVC-GW-5000, SVC-GW-5030)
        └── UnexpectedResponseError        a body that is not JSON: not the API answering

A decline is told by its code, not its status: the service lists no decline
status for the card charge, so the sandbox answers 400 with a ``SVC-PAY-3xxx``
code, and a decline is never a `BadRequestError`. A code this client does not know
falls back to its family (``SVC-PAY-3…`` is a decline), else to the class of its
HTTP status, so a new code never crashes a caller that catches the family. Every `APIError`
carries ``code``, ``message``, ``request_id`` and ``http_status``, plus the
spec's advice for the code (``spec``) where there is one; ``str(err)`` always
shows the request id to quote to support. An answer whose body is not JSON (a web
server's HTML page at the wrong address) is an `UnexpectedResponseError` whatever its
status, and is retried only on a status that means "later" (408, 429, 502, 503, 504),
which a proxy or a rate limiter in front of the API may answer.
"""

from __future__ import annotations

import httpx2

from workbench._unreachable import GATEWAY_STATUSES, describe_foreign_body
from workbench.spec import ERRORS, ErrorCode

__all__ = [
    "APIConnectionError",
    "APIError",
    "APIKeyError",
    "APITimeoutError",
    "AuthenticationError",
    "BadRequestError",
    "CardDeclinedError",
    "ConflictError",
    "DeclineError",
    "IdempotencyConflictError",
    "InsufficientFundsError",
    "InvalidRequestError",
    "MethodNotAllowedError",
    "NotFoundError",
    "PaymentStateError",
    "RateLimitError",
    "RawCardDataError",
    "RefundAmountError",
    "RequestInProgressError",
    "RequestTooLargeError",
    "ServerError",
    "SessionStateError",
    "SignatureError",
    "StateConflictError",
    "SubscriptionStateError",
    "ThreeDSecureAssertionError",
    "ThreeDSecureFailedError",
    "TimestampError",
    "UnexpectedResponseError",
    "WorkbenchError",
    "error_class_for",
    "make_api_error",
]


class WorkbenchError(Exception):
    """Base class of every error the client raises."""


class APIConnectionError(WorkbenchError):
    """The request got no HTTP response: connection refused or reset, DNS failure...

    Attributes:
        request: the request that failed (its headers are not part of the text).
        retries: how many retries were taken before giving up.
    """

    def __init__(self, message: str, *, request: httpx2.Request, retries: int = 0) -> None:
        super().__init__(message)
        self.request = request
        self.retries = retries


class APITimeoutError(APIConnectionError):
    """The request timed out."""


class APIError(WorkbenchError):
    """The service answered with an error.

    Attributes:
        code: the envelope's ``code`` (``""`` when the body had none).
        message: the envelope's ``message``.
        request_id: the envelope's ``requestId``, else the ``X-Request-Id`` header.
        http_status: the HTTP status code.
        spec: the spec's entry for ``code`` (cause, action, retryable), if known.
        response: the raw response.
        retries: how many retries were taken before this error was final.
    """

    def __init__(
        self,
        *,
        code: str,
        message: str,
        request_id: str | None,
        http_status: int,
        response: httpx2.Response | None = None,
        retries: int = 0,
    ) -> None:
        self.code = code
        self.message = message
        self.request_id = request_id
        self.http_status = http_status
        self.response = response
        self.retries = retries
        self.spec: ErrorCode | None = ERRORS.get(code)
        super().__init__(str(self))

    @property
    def retryable(self) -> bool:
        """Whether retrying the same request under the same key can succeed."""
        if self.spec is not None:
            return self.spec.retryable
        return self.http_status in (408, 429) or self.http_status >= 500

    def __str__(self) -> str:
        head = f"{self.code} " if self.code else ""
        return f"{head}(HTTP {self.http_status}): {self.message} [request_id={self.request_id}]"

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(code={self.code!r}, http_status={self.http_status}, "
            f"request_id={self.request_id!r}, message={self.message!r})"
        )


class BadRequestError(APIError):
    """400: the request is malformed or invalid."""


class InvalidRequestError(BadRequestError):
    """SVC-VAL-4001: a field is missing, mistyped or out of range; the message names it."""


class RawCardDataError(BadRequestError):
    """SVC-VAL-4002: a card number was sent where a ``tok_`` token is required."""


class ThreeDSecureAssertionError(BadRequestError):
    """SVC-PAY-4001: the 3-D Secure ``pares`` or ``correlationId`` does not belong here."""


class RefundAmountError(BadRequestError):
    """SVC-PAY-4002: the refund is larger than the refundable amount."""


class AuthenticationError(APIError):
    """401: the request's authentication headers were refused."""


class TimestampError(AuthenticationError):
    """SVC-GW-1001: X-Timestamp missing, malformed or outside ±5 minutes."""


class SignatureError(AuthenticationError):
    """SVC-GW-1002: X-Signature does not match the request.

    Attributes:
        likely_cause: set when this client signed the request itself (its canonical
            string is then right): the key pair most likely does not match, said with
            both keys masked. ``None`` for an error built from a response alone.
    """

    likely_cause: str | None = None

    def __str__(self) -> str:
        text = super().__str__()
        return f"{text}; {self.likely_cause}" if self.likely_cause else text


class APIKeyError(AuthenticationError):
    """SVC-GW-1003: X-Api-Key missing, unknown or revoked."""


class DeclineError(APIError):
    """The charge was declined (``SVC-PAY-3xxx``; HTTP 400, or 402 from a service that
    sends it). The payment is recorded: read it for its ``declined`` or ``failed`` status."""


class CardDeclinedError(DeclineError):
    """SVC-PAY-3001: the issuer declined the card."""


class InsufficientFundsError(DeclineError):
    """SVC-PAY-3002: the card has insufficient funds."""


class ThreeDSecureFailedError(DeclineError):
    """SVC-PAY-3003: the buyer failed the 3-D Secure challenge."""


class NotFoundError(APIError):
    """404: no such route or object for this merchant."""


class MethodNotAllowedError(APIError):
    """405: the route exists, but not with this method."""


class ConflictError(APIError):
    """409: the request conflicts with an earlier one or with the object's state."""


class IdempotencyConflictError(ConflictError):
    """SVC-GW-2001: the key was used before with a different payload. Never retried."""


class RequestInProgressError(ConflictError):
    """SVC-GW-2002: the first request under this key has not finished yet."""


class StateConflictError(ConflictError):
    """The object's current state does not allow the action."""


class PaymentStateError(StateConflictError):
    """SVC-PAY-4090: the payment's state does not allow the action."""


class SessionStateError(StateConflictError):
    """SVC-SES-4090: the checkout session is no longer active."""


class SubscriptionStateError(StateConflictError):
    """SVC-SUB-4090: the subscription's state does not allow the action."""


class RequestTooLargeError(BadRequestError):
    """SVC-GW-4013 (HTTP 400; a 413 is read the same): the body is larger than the
    service reads."""


class RateLimitError(APIError):
    """429: too many requests; the client waits for Retry-After before retrying."""


class ServerError(APIError):
    """5xx: the service failed; retried with backoff under the same key."""


class UnexpectedResponseError(APIError):
    """Something that is not the API answered: its body is not JSON (an HTML page...).

    The base URL most likely points at another server. The message names the address,
    the status and what the body was, never the body itself.
    """

    @property
    def retryable(self) -> bool:
        """Only on 408, 429, 502, 503 or 504 (a proxy or a limiter in front of the API)."""
        return self.http_status in GATEWAY_STATUSES

    def __str__(self) -> str:
        quoted = f" [request_id={self.request_id}]" if self.request_id else ""
        return f"(HTTP {self.http_status}) {self.message}{quoted}"


_BY_CODE: dict[str, type[APIError]] = {
    "SVC-GW-1001": TimestampError,
    "SVC-GW-1002": SignatureError,
    "SVC-GW-1003": APIKeyError,
    "SVC-GW-1004": RateLimitError,
    "SVC-GW-2001": IdempotencyConflictError,
    "SVC-GW-2002": RequestInProgressError,
    "SVC-GW-4000": BadRequestError,
    "SVC-GW-4004": NotFoundError,
    "SVC-GW-4005": MethodNotAllowedError,
    "SVC-GW-4013": RequestTooLargeError,
    "SVC-GW-5000": ServerError,
    "SVC-GW-5030": ServerError,
    "SVC-VAL-4001": InvalidRequestError,
    "SVC-VAL-4002": RawCardDataError,
    "SVC-PAY-3001": CardDeclinedError,
    "SVC-PAY-3002": InsufficientFundsError,
    "SVC-PAY-3003": ThreeDSecureFailedError,
    "SVC-PAY-4001": ThreeDSecureAssertionError,
    "SVC-PAY-4002": RefundAmountError,
    "SVC-PAY-4090": PaymentStateError,
    "SVC-SES-4090": SessionStateError,
    "SVC-SUB-4090": SubscriptionStateError,
}

_BY_STATUS: dict[int, type[APIError]] = {
    400: BadRequestError,
    401: AuthenticationError,
    402: DeclineError,
    404: NotFoundError,
    405: MethodNotAllowedError,
    409: ConflictError,
    413: RequestTooLargeError,
    429: RateLimitError,
}


#: Families of codes this client may not know yet, by prefix.
_BY_PREFIX: dict[str, type[APIError]] = {"SVC-PAY-3": DeclineError}


def error_class_for(code: str, http_status: int) -> type[APIError]:
    """The exception class for an error: by ``code`` if known, then by the code's
    family, else by HTTP status."""
    by_code = _BY_CODE.get(code)
    if by_code is not None:
        return by_code
    for prefix, family in _BY_PREFIX.items():
        if code.startswith(prefix):
            return family
    if code in ERRORS:
        http_status = ERRORS[code].http_status
    if http_status >= 500:
        return ServerError
    return _BY_STATUS.get(http_status, APIError)


def make_api_error(response: httpx2.Response, *, retries: int = 0) -> APIError:
    """Build the typed error for an error response from its envelope.

    A JSON body that is not the envelope still gives an error of the status's class;
    a body that is not JSON at all (a web server's HTML page) an
    `UnexpectedResponseError` that says so.
    """
    foreign = describe_foreign_body(response)
    if foreign is not None:
        return UnexpectedResponseError(
            code="",
            message=foreign,
            request_id=response.headers.get("X-Request-Id"),
            http_status=response.status_code,
            response=response,
            retries=retries,
        )
    code = ""
    message = ""
    request_id: str | None = None
    try:
        body = response.json()
    except ValueError:
        body = None
    if isinstance(body, dict):
        code = str(body.get("code") or "")
        message = str(body.get("message") or "")
        rid = body.get("requestId")
        request_id = str(rid) if rid else None
    if not message:
        message = response.text[:200] or response.reason_phrase or "error"
    if request_id is None:
        request_id = response.headers.get("X-Request-Id")
    cls = error_class_for(code, response.status_code)
    return cls(
        code=code,
        message=message,
        request_id=request_id,
        http_status=response.status_code,
        response=response,
        retries=retries,
    )
