"""Request and response bodies of the checkout session route."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import ConfigDict, Field

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


#: What the sessions service checks across fields, said in the document (JSON Schema
#: 2020-12, OpenAPI 3.1): ``amount`` in modes ``payment`` (the default) and ``qr``, none
#: and a ``customerId`` in ``card_update_only``; ``splits`` only in ``payment``. That the
#: splits sum to at most ``amount`` no schema can say.
_MODE_RULES: dict[str, Any] = {
    "allOf": [
        {
            "if": {"required": ["mode"], "properties": {"mode": {"const": "card_update_only"}}},
            "then": {
                "required": ["customerId"],
                "properties": {"amount": {"type": "null"}, "customerId": {"type": "string"}},
            },
            "else": {"required": ["amount"], "properties": {"amount": {"type": "integer"}}},
        },
        {
            "if": {"required": ["splits"], "properties": {"splits": {"type": "array"}}},
            "then": {"properties": {"mode": {"const": "payment"}}},
        },
    ]
}


class SessionRequest(StrictRequest):
    """POST /v1/payments/sessions."""

    model_config = ConfigDict(json_schema_extra=_MODE_RULES)

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
