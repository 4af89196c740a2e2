"""Request and response bodies of the refund route."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from workbench.sandbox.bodies import ResponseBody, StrictRequest
from workbench.spec import limits

__all__ = ["LastRefund", "RefundRequest", "RefundResponse"]


class RefundRequest(StrictRequest):
    """POST /v1/payments/{id}/refund; a reason over 500 characters is truncated, not refused."""

    amount: Annotated[int, Field(ge=1, le=limits.MAX_AMOUNT)] | None = None
    reason: Annotated[str, Field(max_length=limits.MAX_BODY_BYTES)] | None = None


class LastRefund(ResponseBody):
    """The refund a refund call created (or reports on)."""

    refundId: str
    status: str
    amount: int
    bankRefundId: str | None
    createdAt: str
    completedAt: str | None


class RefundResponse(ResponseBody):
    """The refund fields."""

    paymentId: str
    status: str
    refundAmount: int
    refundableAmount: int
    lastRefund: LastRefund
