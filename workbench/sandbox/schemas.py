"""Request and response bodies of the refund and session routes, as pydantic models.

Requests are strict (an amount of ``"100"`` or ``100.0`` is a type error) and forbid
unknown fields, so a typo such as ``amout`` is reported by name.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

# ChargeRequest is `workbench.sandbox.payments.models`'; shortcut.py, which another branch
# is changing, still imports it from here.
from workbench.sandbox.bodies import (
    Amount,
    Identifier,
    ResponseBody,
    StrictRequest,
    TransactionId,
    Url,
)
from workbench.sandbox.payments.models import ChargeRequest
from workbench.spec import limits

__all__ = [
    "ChargeRequest",
    "LastRefund",
    "RefundRequest",
    "RefundResponse",
    "SessionRequest",
    "SessionResponse",
    "Split",
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
