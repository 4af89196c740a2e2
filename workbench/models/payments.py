"""Results of the payment and checkout-session endpoints.

``commission`` and ``net_amount`` are set when money moves (on capture); a payment
that has not captured (authorized, voided, declined, pending or failed 3-D Secure)
reports 0 for both in the sandbox, and either may be absent (``None``) where a service
leaves it out: treat 0 and ``None`` alike as "no fee booked yet". ``card_mask`` is as
long as the card number (``378282*****0005`` for a 15-digit card) and
``transaction_id`` is any text (``"sipariş-42"``), compared exactly.
"""

from __future__ import annotations

from workbench.models._base import APIObject, Kurus, UtcDatetime

__all__ = [
    "CaptureResult",
    "CardCharge",
    "CheckoutSession",
    "Payment",
    "PublicPaymentStatus",
    "Refund",
    "RefundResult",
    "ThreeDSecureResult",
    "UpdateCardSession",
    "VoidResult",
]


class CheckoutSession(APIObject):
    """A hosted-checkout session (``POST /v1/payments/sessions``)."""

    session_id: str
    checkout_url: str
    expires_at: UtcDatetime
    merchant_id: str | None = None
    amount: Kurus | None = None
    currency: str = "TRY"
    status: str = "active"

    @property
    def id(self) -> str:
        """The session's id (``sessionId``), the same as ``session_id``."""
        return self.session_id


class UpdateCardSession(APIObject):
    """A card-update session of the buyer portal: only id, page address and expiry."""

    session_id: str
    checkout_url: str
    expires_at: UtcDatetime

    @property
    def id(self) -> str:
        """The session's id (``sessionId``), the same as ``session_id``."""
        return self.session_id


class CardCharge(APIObject):
    """The answer to ``POST /v1/payments/card``.

    A charge that needs a 3-D Secure challenge carries ``correlation_id`` and,
    from the sandbox, the challenge page's ``acs_url``; `requires_action` says so.
    """

    payment_id: str
    status: str
    amount: Kurus
    currency: str = "TRY"
    commission: Kurus | None = None
    net_amount: Kurus | None = None
    card_mask: str | None = None
    card_brand: str | None = None
    card_type: str | None = None
    installment_count: int | None = None
    three_d_secure: bool | None = None
    auth_code: str | None = None
    correlation_id: str | None = None
    acs_url: str | None = None
    created_at: UtcDatetime | None = None
    completed_at: UtcDatetime | None = None

    @property
    def id(self) -> str:
        """The payment's id, as `Payment.id` names it (the same as ``payment_id``).

        Code written against a retrieved `Payment` (``payment.id``) works on the charge's
        answer too.
        """
        return self.payment_id

    @property
    def requires_action(self) -> bool:
        """Whether the buyer must pass a 3-D Secure challenge before the payment completes."""
        return self.status == "pending_3ds" or (
            self.correlation_id is not None and self.status not in ("captured", "authorized")
        )


class ThreeDSecureResult(APIObject):
    """The answer to ``POST /v1/payments/{id}/3ds-callback``."""

    id: str
    status: str
    amount: Kurus | None = None
    currency: str = "TRY"
    commission: Kurus | None = None
    net_amount: Kurus | None = None
    auth_code: str | None = None
    completed_at: UtcDatetime | None = None


class CaptureResult(APIObject):
    """The answer to ``POST /v1/payments/{id}/capture``."""

    id: str
    status: str
    amount: Kurus
    currency: str = "TRY"
    commission: Kurus | None = None
    net_amount: Kurus | None = None
    refundable_amount: Kurus | None = None
    completed_at: UtcDatetime | None = None


class VoidResult(APIObject):
    """The answer to ``POST /v1/payments/{id}/void``."""

    id: str
    status: str
    amount: Kurus
    currency: str = "TRY"


class PublicPaymentStatus(APIObject):
    """The buyer-safe status of a payment: its id and status, nothing else."""

    payment_id: str
    status: str

    @property
    def id(self) -> str:
        """The payment's id (``paymentId``), the same as ``payment_id``."""
        return self.payment_id


class Refund(APIObject):
    """One refund record (``lastRefund`` of a refund answer)."""

    refund_id: str
    status: str
    amount: Kurus
    bank_refund_id: str | None = None
    created_at: UtcDatetime | None = None
    completed_at: UtcDatetime | None = None

    @property
    def id(self) -> str:
        """The refund's id (``refundId``), the same as ``refund_id``."""
        return self.refund_id


class RefundResult(APIObject):
    """The answer to ``POST /v1/payments/{id}/refund``.

    A 202 answer is not an error: the refund is in flight (`in_flight`) and
    settles later; ask again with the same Idempotency-Key (see
    ``workbench.waiting.wait_for_refund``) to learn its final state.
    """

    payment_id: str
    status: str
    refund_amount: Kurus | None = None
    refundable_amount: Kurus | None = None
    last_refund: Refund | None = None

    @property
    def in_flight(self) -> bool:
        """Whether the refund has not settled yet (HTTP 202, or a non-final refund record)."""
        if self.http_status == 202:
            return True
        return self.last_refund is not None and self.last_refund.status != "completed"

    @property
    def id(self) -> str:
        """The refunded payment's id (``paymentId``), the same as ``payment_id``.

        The refund's own id is ``last_refund.id``.
        """
        return self.payment_id


class Payment(APIObject):
    """A payment object (``GET /v1/payments/{id}``)."""

    id: str
    status: str
    amount: Kurus
    currency: str = "TRY"
    merchant_id: str | None = None
    transaction_id: str | None = None
    commission: Kurus | None = None
    net_amount: Kurus | None = None
    card_mask: str | None = None
    card_brand: str | None = None
    card_type: str | None = None
    bin: str | None = None
    installment_count: int | None = None
    three_d_secure: bool | None = None
    refund_amount: Kurus | None = None
    refundable_amount: Kurus | None = None
    created_at: UtcDatetime | None = None
    completed_at: UtcDatetime | None = None
