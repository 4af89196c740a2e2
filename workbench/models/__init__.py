"""Typed results of every endpoint: pydantic v2 models, tolerant of new fields and statuses.

Each model is imported from its module when first asked for (PEP 562): a client loads
pydantic and the models with its first answer, not at ``import workbench``.
"""

from typing import TYPE_CHECKING, Any

from workbench._lazy import LazyExports

if TYPE_CHECKING:
    from workbench.models._base import APIObject, CursorPage, Kurus, UtcDatetime
    from workbench.models.cards import CardToken
    from workbench.models.payments import (
        CaptureResult,
        CardCharge,
        CheckoutSession,
        Payment,
        PublicPaymentStatus,
        Refund,
        RefundResult,
        ThreeDSecureResult,
        UpdateCardSession,
        VoidResult,
    )
    from workbench.models.sandbox import (
        AuthorizationLifetime,
        BusinessTime,
        ChallengeAnswer,
        CustomerFixture,
        DeliveryAttempt,
        EventDeliveries,
        FailNext,
        Latency,
        MerchantCredentials,
        MerchantDeletion,
        MerchantList,
        MerchantSummary,
        RateLimit,
        ReconcilerPass,
        ResetResult,
        SandboxEvent,
        SandboxEventList,
        SandboxFixtures,
        SavedCard,
        SettleResult,
        StoreFixture,
        TestCard,
        WebhookTarget,
    )
    from workbench.models.subscriptions import (
        ChargeReceipt,
        PublicCancellation,
        PublicSubscription,
        Subscription,
        SubscriptionCancellation,
        SubscriptionCharge,
        SubscriptionChargeList,
        SubscriptionPage,
        SubscriptionUpdate,
    )

__all__ = [
    "APIObject",
    "AuthorizationLifetime",
    "BusinessTime",
    "CaptureResult",
    "CardCharge",
    "CardToken",
    "ChallengeAnswer",
    "ChargeReceipt",
    "CheckoutSession",
    "CursorPage",
    "CustomerFixture",
    "DeliveryAttempt",
    "EventDeliveries",
    "FailNext",
    "Kurus",
    "Latency",
    "MerchantCredentials",
    "MerchantDeletion",
    "MerchantList",
    "MerchantSummary",
    "Payment",
    "PublicCancellation",
    "PublicPaymentStatus",
    "PublicSubscription",
    "RateLimit",
    "ReconcilerPass",
    "Refund",
    "RefundResult",
    "ResetResult",
    "SandboxEvent",
    "SandboxEventList",
    "SandboxFixtures",
    "SavedCard",
    "SettleResult",
    "StoreFixture",
    "Subscription",
    "SubscriptionCancellation",
    "SubscriptionCharge",
    "SubscriptionChargeList",
    "SubscriptionPage",
    "SubscriptionUpdate",
    "TestCard",
    "ThreeDSecureResult",
    "UpdateCardSession",
    "UtcDatetime",
    "VoidResult",
    "WebhookTarget",
]

_EXPORTS = LazyExports(
    __name__,
    {
        "workbench.models._base": (
            "APIObject",
            "CursorPage",
            "Kurus",
            "UtcDatetime",
        ),
        "workbench.models.cards": ("CardToken",),
        "workbench.models.payments": (
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
        ),
        "workbench.models.sandbox": (
            "AuthorizationLifetime",
            "BusinessTime",
            "ChallengeAnswer",
            "CustomerFixture",
            "DeliveryAttempt",
            "EventDeliveries",
            "FailNext",
            "Latency",
            "MerchantCredentials",
            "MerchantDeletion",
            "MerchantList",
            "MerchantSummary",
            "RateLimit",
            "ReconcilerPass",
            "ResetResult",
            "SandboxEvent",
            "SandboxEventList",
            "SandboxFixtures",
            "SavedCard",
            "SettleResult",
            "StoreFixture",
            "TestCard",
            "WebhookTarget",
        ),
        "workbench.models.subscriptions": (
            "ChargeReceipt",
            "PublicCancellation",
            "PublicSubscription",
            "Subscription",
            "SubscriptionCancellation",
            "SubscriptionCharge",
            "SubscriptionChargeList",
            "SubscriptionPage",
            "SubscriptionUpdate",
        ),
    },
)


def __getattr__(name: str) -> Any:
    return _EXPORTS.load(name)


def __dir__() -> list[str]:
    return _EXPORTS.names(globals())
