"""Request and response bodies of the session routes, as pydantic models.

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
