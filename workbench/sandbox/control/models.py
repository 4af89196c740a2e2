"""Request bodies of the sandbox's control routes."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from workbench.sandbox.bodies import StrictRequest, Url
from workbench.sandbox.payments.expiry import MAX_LIFETIME_SECONDS

__all__ = [
    "MAX_ADVANCE_SECONDS",
    "AdvanceRequest",
    "AuthorizationLifetimeRequest",
    "FailNextRequest",
    "LatencyRequest",
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
