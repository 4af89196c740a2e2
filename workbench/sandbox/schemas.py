"""Request and response bodies of the payment, session and token routes, as pydantic models.

Requests are strict (an amount of ``"100"`` or ``100.0`` is a type error) and forbid
unknown fields, so a typo such as ``amout`` is reported by name.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import ConfigDict, Field

from workbench.sandbox.bodies import (
    Amount,
    Identifier,
    ResponseBody,
    StrictRequest,
    TransactionId,
    Url,
)
from workbench.spec import limits

__all__ = [
    "CaptureRequest",
    "CaptureResponse",
    "ChargeRequest",
    "ChargeResponse",
    "LastRefund",
    "PaymentObject",
    "PublicStatus",
    "RefundRequest",
    "RefundResponse",
    "SessionRequest",
    "SessionResponse",
    "Split",
    "ThreeDSCallbackRequest",
    "ThreeDSCallbackResponse",
    "TokenRequest",
    "TokenResponse",
    "VoidRequest",
    "VoidResponse",
]

_Request = StrictRequest
_Response = ResponseBody


class Split(_Request):
    """One marketplace split item."""

    submerchantId: Identifier
    amountMinor: Annotated[int, Field(ge=1, le=limits.MAX_AMOUNT)]


class SessionRequest(_Request):
    """POST /v1/payments/sessions."""

    transactionId: TransactionId
    amount: Amount | None = None
    currency: Literal["TRY"]
    description: Annotated[str, Field(max_length=500)] | None = None
    returnUrl: Url
    callbackUrl: Url | None = None
    installmentEnabled: bool = False
    customerId: Identifier | None = None
    mode: Literal["payment", "card_update_only", "qr"] = "payment"
    splits: Annotated[list[Split], Field(max_length=50)] | None = None


class SessionResponse(_Response):
    """The checkout session."""

    sessionId: str
    checkoutUrl: str
    expiresAt: str
    merchantId: str
    amount: int
    currency: str
    status: str


class ChargeRequest(_Request):
    """POST /v1/payments/card."""

    transactionId: TransactionId
    amount: Amount
    currency: Literal["TRY"]
    cardToken: Annotated[str, Field(min_length=1, max_length=80)]
    installmentCount: Annotated[
        int, Field(ge=limits.INSTALLMENTS_MIN, le=limits.INSTALLMENTS_MAX)
    ] = 1
    threeDSecure: bool = True
    customerId: Identifier | None = None
    saveCard: bool = False
    capture: bool = True


class ChargeResponse(_Response):
    """The card charge response (plus ``correlationId`` and ``acsUrl`` while 3DS is pending)."""

    paymentId: str
    status: str
    amount: int
    currency: str
    commission: int
    netAmount: int
    cardMask: str
    cardBrand: str
    cardType: str
    installmentCount: int
    threeDSecure: bool
    authCode: str | None
    createdAt: str
    completedAt: str | None
    correlationId: str | None = None
    acsUrl: str | None = None


class ThreeDSCallbackRequest(_Request):
    """POST /v1/payments/{id}/3ds-callback."""

    pares: Annotated[str, Field(min_length=1, max_length=4096)]
    correlationId: Annotated[str, Field(min_length=1, max_length=64)]


class ThreeDSCallbackResponse(_Response):
    """The 3ds-callback fields."""

    id: str
    status: str
    amount: int
    currency: str
    commission: int
    netAmount: int
    authCode: str | None
    completedAt: str | None


class CaptureRequest(_Request):
    """POST /v1/payments/{id}/capture: an empty object (partial capture is a later phase)."""


class CaptureResponse(_Response):
    """The capture fields."""

    id: str
    status: str
    amount: int
    currency: str
    commission: int
    netAmount: int
    refundableAmount: int
    completedAt: str | None


class VoidRequest(_Request):
    """POST /v1/payments/{id}/void."""

    reason: Annotated[str, Field(max_length=limits.VOID_REASON_MAX)] | None = None


class VoidResponse(_Response):
    """The void fields."""

    id: str
    status: str
    amount: int
    currency: str


class RefundRequest(_Request):
    """POST /v1/payments/{id}/refund; a reason over 500 characters is truncated, not refused."""

    amount: Annotated[int, Field(ge=1, le=limits.MAX_AMOUNT)] | None = None
    reason: Annotated[str, Field(max_length=limits.MAX_BODY_BYTES)] | None = None


class LastRefund(_Response):
    """The refund a refund call created (or reports on)."""

    refundId: str
    status: str
    amount: int
    bankRefundId: str | None
    createdAt: str
    completedAt: str | None


class RefundResponse(_Response):
    """The refund fields."""

    paymentId: str
    status: str
    refundAmount: int
    refundableAmount: int
    lastRefund: LastRefund


class PaymentObject(_Response):
    """GET /v1/payments/{id}."""

    id: str
    merchantId: str
    transactionId: str
    status: str
    amount: int
    currency: str
    commission: int
    netAmount: int
    cardMask: str
    cardBrand: str
    cardType: str
    bin: str
    installmentCount: int
    threeDSecure: bool
    refundAmount: int
    refundableAmount: int
    createdAt: str
    completedAt: str | None


class PublicStatus(_Response):
    """GET /v1/payments/{id}/public-status: nothing but the id and the status."""

    model_config = ConfigDict(extra="forbid")

    paymentId: str
    status: str


class TokenRequest(_Request):
    """POST /v1/cards/tokens (shape ours): a card number to exchange for a ``tok_`` token."""

    cardNumber: Annotated[str, Field(min_length=1, max_length=32)]
    expiryMonth: Annotated[int, Field(ge=1, le=12)]
    expiryYear: Annotated[int, Field(ge=2000, le=2100)]
    cvc: Annotated[str, Field(pattern=r"^\d{3,4}$")]
    cardholderName: Annotated[str, Field(max_length=100)] | None = None


class TokenResponse(_Response):
    """A fresh vault token and what may be shown of the card."""

    token: str
    cardMask: str
    cardBrand: str
    cardType: str
    bin: str
    last4: str
