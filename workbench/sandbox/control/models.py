"""Request bodies of the sandbox's control routes."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from workbench.sandbox.bodies import StrictRequest, Url

__all__ = [
    "AdvanceRequest",
    "FailNextRequest",
    "LatencyRequest",
    "RateLimitRequest",
    "WebhookRequest",
]


class AdvanceRequest(StrictRequest):
    """How far to move the business clock."""

    seconds: Annotated[int, Field(ge=0, le=10 * 366 * 24 * 3600)]


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
