"""Request bodies of the sandbox's control routes."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import AfterValidator, Field

from workbench.sandbox.bodies import ResponseBody, StrictRequest, Url
from workbench.sandbox.payments.expiry import MAX_LIFETIME_SECONDS

__all__ = [
    "MAX_ADVANCE_SECONDS",
    "AdvanceRequest",
    "AuthorizationLifetimeRequest",
    "CreateMerchantRequest",
    "FailNextRequest",
    "LatencyRequest",
    "MerchantCreated",
    "RateLimitRequest",
    "WebhookRequest",
]


#: The furthest one clock advance goes (400 days: a yearly renewal, leap day included,
#: with room). The advance holds the merchant's
#: reconciler lease while it runs every renewal, expiry and settlement falling due, in
#: order; a decade of daily renewals took tens of seconds and held up the ticks. About a
#: year at a time keeps one call short; a client wanting more advances again.
MAX_ADVANCE_SECONDS = 400 * 24 * 3600


class AdvanceRequest(StrictRequest):
    """How far to move the business clock (at most `MAX_ADVANCE_SECONDS` a call)."""

    seconds: Annotated[
        int,
        Field(
            ge=0,
            le=MAX_ADVANCE_SECONDS,
            description="Seconds to move forward: at most 34560000 (400 days) a call.",
        ),
    ]


class AuthorizationLifetimeRequest(StrictRequest):
    """How long this merchant's authorizations wait for a capture (null: the default)."""

    seconds: Annotated[int, Field(ge=1, le=MAX_LIFETIME_SECONDS)] | None


#: The longest name a merchant may be given.
MERCHANT_NAME_MAX = 100


def _printable(value: str) -> str:
    if any(ch < " " or "\x7f" <= ch <= "\x9f" for ch in value):
        raise ValueError("must not contain control characters")
    if not value.strip():
        raise ValueError("must not be blank")
    return value


MerchantName = Annotated[
    str, Field(min_length=1, max_length=MERCHANT_NAME_MAX), AfterValidator(_printable)
]


class CreateMerchantRequest(StrictRequest):
    """A new merchant's name (optional)."""

    name: (
        Annotated[
            str, Field(min_length=1, max_length=MERCHANT_NAME_MAX), AfterValidator(_printable)
        ]
        | None
    ) = None


class FailNextRequest(StrictRequest):
    """How the next request of this merchant should fail."""

    mode: Literal["429", "500", "timeout"]
    seconds: Annotated[int, Field(ge=1, le=120)] = 10


class LatencyRequest(StrictRequest):
    """Simulated latency added to every response of this merchant."""

    milliseconds: Annotated[int, Field(ge=0, le=30_000)]


class RateLimitRequest(StrictRequest):
    """This merchant's rate limit (``perSecond`` null: back to the default)."""

    perSecond: Annotated[float, Field(ge=0, le=100_000)] | None
    burst: Annotated[int, Field(ge=1, le=100_000)] = 1


class WebhookRequest(StrictRequest):
    """The store's webhook URL (null to remove)."""

    url: Url | None


class MerchantCreated(ResponseBody):
    """A merchant just made: its ids and its keys (the secrets appear here only)."""

    merchantId: str
    name: str
    storeId: str
    apiKey: str
    secretKey: str
    webhookSecret: str
    customers: list[str]
    created: str
