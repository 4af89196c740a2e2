"""Request and response bodies of the payment routes: charge, 3-D Secure, capture, void, tokens.

Also the sandbox ACS's challenge answer (`ChallengeRequest`, `ChallengeResponse`).
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from workbench.sandbox.bodies import (
    Amount,
    Identifier,
    ResponseBody,
    StrictRequest,
    TransactionId,
)
from workbench.spec import limits

__all__ = [
    "CaptureRequest",
    "CaptureResponse",
    "ChallengeRequest",
    "ChallengeResponse",
    "ChargeRequest",
    "ChargeResponse",
    "PaymentObject",
    "PublicStatus",
    "ThreeDSCallbackRequest",
    "ThreeDSCallbackResponse",
    "TokenRequest",
    "TokenResponse",
    "VoidRequest",
    "VoidResponse",
]


class ChargeRequest(StrictRequest):
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


class ChargeResponse(ResponseBody):
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


class ThreeDSCallbackRequest(StrictRequest):
    """POST /v1/payments/{id}/3ds-callback."""

    pares: Annotated[str, Field(min_length=1, max_length=4096)]
    correlationId: Annotated[str, Field(min_length=1, max_length=64)]


class ThreeDSCallbackResponse(ResponseBody):
    """The 3ds-callback fields."""

    id: str
    status: str
    amount: int
    currency: str
    commission: int
    netAmount: int
    authCode: str | None
    completedAt: str | None


class CaptureRequest(StrictRequest):
    """POST /v1/payments/{id}/capture: an empty object (partial capture is a later phase)."""


class CaptureResponse(ResponseBody):
    """The capture fields."""

    id: str
    status: str
    amount: int
    currency: str
    commission: int
    netAmount: int
    refundableAmount: int
    completedAt: str | None


class VoidRequest(StrictRequest):
    """POST /v1/payments/{id}/void."""

    reason: Annotated[str, Field(max_length=limits.VOID_REASON_MAX)] | None = None


class VoidResponse(ResponseBody):
    """The void fields."""

    id: str
    status: str
    amount: int
    currency: str


class PaymentObject(ResponseBody):
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


class PublicStatus(ResponseBody):
    """GET /v1/payments/{id}/public-status: nothing but the id and the status."""

    model_config = ConfigDict(extra="forbid")

    paymentId: str
    status: str


class TokenRequest(StrictRequest):
    """POST /v1/cards/tokens (shape ours): a card number to exchange for a ``tok_`` token."""

    cardNumber: Annotated[str, Field(min_length=1, max_length=32)]
    expiryMonth: Annotated[int, Field(ge=1, le=12)]
    expiryYear: Annotated[int, Field(ge=2000, le=2100)]
    cvc: Annotated[str, Field(pattern=r"^\d{3,4}$")]
    cardholderName: Annotated[str, Field(max_length=100)] | None = None


class TokenResponse(ResponseBody):
    """A fresh vault token and what may be shown of the card."""

    token: str
    cardMask: str
    cardBrand: str
    cardType: str
    bin: str
    last4: str


class ChallengeRequest(StrictRequest):
    """The buyer's answer to the challenge."""

    correlationId: Annotated[str, Field(min_length=1, max_length=64)]
    code: Annotated[str, Field(max_length=32)]


class ChallengeResponse(BaseModel):
    """The signed outcome to post to /v1/payments/{id}/3ds-callback."""

    model_config = ConfigDict(defer_build=True)  # as `ResponseBody`

    paymentId: str
    correlationId: str
    pares: str
    result: str
