"""Request and response bodies of the checkout session route."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from workbench.sandbox.bodies import (
    Amount,
    Identifier,
    ResponseBody,
    ReturnUrl,
    StrictRequest,
    TransactionId,
    Url,
)
from workbench.spec import limits

__all__ = ["SessionRequest", "SessionResponse", "Split"]


class Split(StrictRequest):
    """One marketplace split item."""

    submerchantId: Identifier
    amountMinor: Annotated[int, Field(ge=1, le=limits.MAX_AMOUNT)]


class SessionRequest(StrictRequest):
    """POST /v1/payments/sessions."""

    transactionId: TransactionId
    amount: Amount | None = None
    currency: Literal["TRY"]
    description: Annotated[str, Field(max_length=500)] | None = None
    returnUrl: ReturnUrl
    callbackUrl: Url | None = None
    installmentEnabled: bool = False
    customerId: Identifier | None = None
    mode: Literal["payment", "card_update_only", "qr"] = "payment"
    splits: Annotated[list[Split], Field(max_length=50)] | None = None


class SessionResponse(ResponseBody):
    """The checkout session."""

    sessionId: str
    checkoutUrl: str
    expiresAt: str
    merchantId: str
    amount: int
    currency: str
    status: str
