"""Results of the subscription and buyer-portal endpoints."""

from __future__ import annotations

from typing import TYPE_CHECKING

from workbench.models._base import APIObject, CursorPage, Kurus, UtcDatetime

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "ChargeReceipt",
    "PublicCancellation",
    "PublicSubscription",
    "Subscription",
    "SubscriptionCancellation",
    "SubscriptionCharge",
    "SubscriptionChargeList",
    "SubscriptionPage",
    "SubscriptionUpdate",
]


class Subscription(APIObject):
    """A subscription; list items carry a subset of the fields (the rest are ``None``)."""

    id: str
    status: str
    amount_minor: Kurus
    currency: str = "TRY"
    interval_count: int
    interval_unit: str
    merchant_id: str | None = None
    store_id: str | None = None
    customer_id: str | None = None
    public_hash: str | None = None
    cycle_number: int | None = None
    next_charge_at: UtcDatetime | None = None
    card_last4: str | None = None
    card_brand: str | None = None
    created_at: UtcDatetime | None = None
    cancel_at_period_end: bool | None = None


class SubscriptionPage(CursorPage[Subscription]):
    """One page of ``GET /v1/subscriptions``."""


class SubscriptionCharge(APIObject):
    """One charge of a subscription."""

    cycle_number: int
    payment_id: str | None = None
    status: str
    amount_minor: Kurus
    charged_at: UtcDatetime | None = None

    @property
    def id(self) -> str | None:
        """The id of the payment this charge made (``paymentId``; ``None`` while it has none)."""
        return self.payment_id


class SubscriptionChargeList(APIObject):
    """The charges of a subscription (``GET /v1/subscriptions/{id}/charges``)."""

    items: list[SubscriptionCharge]

    def to_frame(self) -> pd.DataFrame:
        """The charges as a DataFrame (see `workbench.frames.to_frame`)."""
        from workbench.frames import to_frame

        return to_frame(self.items)


class SubscriptionCancellation(APIObject):
    """The answer to ``POST /v1/subscriptions/{id}/cancel``."""

    id: str
    status: str
    cancel_at_period_end: bool | None = None


class SubscriptionUpdate(APIObject):
    """The answer to pause, resume and retry: id and status (and nextChargeAt for retry)."""

    id: str
    status: str
    next_charge_at: UtcDatetime | None = None


class ChargeReceipt(APIObject):
    """The queueing receipt of ``POST /v1/subscriptions/{id}/charge-now``.

    Poll the subscription at `check_at` until its status leaves ``charging``
    (``workbench.waiting.wait_for_subscription`` does it).
    """

    status: str
    subscription_id: str
    expected_at: UtcDatetime | None = None
    check_at: str | None = None

    @property
    def id(self) -> str:
        """The id of the subscription being charged (``subscriptionId``)."""
        return self.subscription_id


class PublicSubscription(APIObject):
    """The buyer portal's view of a subscription."""

    public_hash: str
    status: str
    merchant_name: str | None = None
    amount_minor: Kurus | None = None
    currency: str = "TRY"
    interval_count: int | None = None
    interval_unit: str | None = None
    card_last4: str | None = None
    card_brand: str | None = None
    next_charge_at: UtcDatetime | None = None

    @property
    def id(self) -> str:
        """The portal's id of the subscription (``publicHash``): the buyer's link, a secret."""
        return self.public_hash


class PublicCancellation(APIObject):
    """The answer to the buyer portal's cancel."""

    public_hash: str
    status: str
    cancel_at_period_end: bool | None = None

    @property
    def id(self) -> str:
        """The portal's id of the subscription (``publicHash``): the buyer's link, a secret."""
        return self.public_hash
