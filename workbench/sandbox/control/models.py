"""Request bodies of the sandbox's control routes."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from workbench.sandbox.bodies import StrictRequest, Url
from workbench.sandbox.payments.expiry import MAX_LIFETIME_SECONDS

__all__ = [
    "AdvanceRequest",
    "AuthorizationLifetimeRequest",
    "FailNextRequest",
    "LatencyRequest",
    "RateLimitRequest",
    "WebhookRequest",
]


class AdvanceRequest(StrictRequest):
    """How far to move the business clock."""

    seconds: Annotated[int, Field(ge=0, le=10 * 366 * 24 * 3600)]


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
