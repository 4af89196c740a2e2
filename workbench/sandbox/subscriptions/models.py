"""Request and response bodies of the subscription and buyer-portal routes.

Requests are strict and forbid unknown fields, like every sandbox request.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from workbench.sandbox.bodies import Identifier, StrictRequest
from workbench.spec import limits

__all__ = [
    "CancelRequest",
    "CancelResponse",
    "ChargeItem",
    "ChargeList",
    "ChargeNowReceipt",
    "EmptyRequest",
    "PublicCancelRequest",
    "PublicCancelResponse",
    "PublicView",
    "RetryResponse",
    "StatusResponse",
    "SubscriptionList",
    "SubscriptionListItem",
    "SubscriptionObject",
    "SubscriptionRequest",
    "UpdateCardSession",
]

#: The interval count's bounds: 1 up to 366 units.
MAX_INTERVAL_COUNT = 366


class _Request(StrictRequest):
    """Strict, unknown fields refused, no NUL characters (the sandbox's request base)."""


class _Response(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)  # as `ResponseBody`


class SubscriptionRequest(_Request):
    """POST /v1/subscriptions."""

    storeId: Identifier
    customerId: Identifier
    amountMinor: Annotated[int, Field(ge=limits.MIN_AMOUNT, le=limits.MAX_AMOUNT)]
    currency: Literal["TRY"]
    intervalCount: Annotated[int, Field(ge=1, le=MAX_INTERVAL_COUNT)]
    intervalUnit: Literal["day", "week", "month", "year"]
    cardToken: Annotated[str, Field(min_length=1, max_length=80)] | None = None
    trialEndAt: Annotated[str, Field(min_length=1, max_length=40)] | None = None
    generateInvoices: bool = False
    description: Annotated[str, Field(max_length=500)] | None = None


class EmptyRequest(_Request):
    """The empty JSON object the pause, resume, retry and charge-now calls take."""


class CancelRequest(_Request):
    """POST /v1/subscriptions/{id}/cancel."""

    atPeriodEnd: bool
    reason: Annotated[str, Field(max_length=500)] | None = None


class PublicCancelRequest(_Request):
    """POST /v1/public/subscriptions/{hash}/cancel."""

    atPeriodEnd: bool = True


class SubscriptionObject(_Response):
    """The full subscription (``publicHash`` only in the creation response)."""

    id: str
    merchantId: str
    storeId: str
    customerId: str
    publicHash: str | None = None
    status: str
    amountMinor: int
    currency: str
    intervalCount: int
    intervalUnit: str
    cycleNumber: int
    nextChargeAt: str | None
    cardLast4: str
    cardBrand: str
    createdAt: str
    cancelAtPeriodEnd: bool
    trialEndAt: str | None


class SubscriptionListItem(_Response):
    """One list item: the spec's subset."""

    id: str
    storeId: str
    status: str
    amountMinor: int
    currency: str
    intervalCount: int
    intervalUnit: str
    nextChargeAt: str | None
    createdAt: str


class SubscriptionList(_Response):
    """A page of the list; ``nextCursor`` is ``null`` on the last page."""

    items: list[SubscriptionListItem]
    nextCursor: str | None


class ChargeItem(_Response):
    """One charge attempt of a subscription."""

    cycleNumber: int
    paymentId: str
    status: str
    amountMinor: int
    chargedAt: str


class ChargeList(_Response):
    """GET /v1/subscriptions/{id}/charges."""

    items: list[ChargeItem]


class CancelResponse(_Response):
    """POST /v1/subscriptions/{id}/cancel."""

    id: str
    status: str
    cancelAtPeriodEnd: bool


class StatusResponse(_Response):
    """Pause and resume."""

    id: str
    status: str


class RetryResponse(_Response):
    """POST /v1/subscriptions/{id}/retry."""

    id: str
    status: str
    nextChargeAt: str | None


class ChargeNowReceipt(_Response):
    """POST /v1/subscriptions/{id}/charge-now (202)."""

    status: Literal["queuing"]
    subscriptionId: str
    expectedAt: str
    checkAt: str


class PublicView(_Response):
    """GET /v1/public/subscriptions/{hash}: exactly the spec's public fields."""

    publicHash: str
    merchantName: str
    status: str
    amountMinor: int
    currency: str
    intervalCount: int
    intervalUnit: str
    cardLast4: str
    cardBrand: str
    nextChargeAt: str | None


class PublicCancelResponse(_Response):
    """POST /v1/public/subscriptions/{hash}/cancel."""

    publicHash: str
    status: str
    cancelAtPeriodEnd: bool


class UpdateCardSession(_Response):
    """POST /v1/public/subscriptions/{hash}/update-card-session (201)."""

    sessionId: str
    checkoutUrl: str
    expiresAt: str
