"""The local sandbox's control routes (``/sandbox/*``): signed, scoped to your merchant.

They exist only in the workbench's sandbox, never in the real service: they
show the built-in fixtures, move the business clock, run the background
reconciler now, settle refunds, and inject failures, latency and rate limits so
that retries and waits can be tried out. `Sandbox.answer_challenge` plays the
buyer on the sandbox's 3-D Secure page.
"""

from __future__ import annotations

from typing import Literal

from workbench._base_client import RequestOptions
from workbench.models import (
    BusinessTime,
    ChallengeAnswer,
    EventDeliveries,
    FailNext,
    Latency,
    RateLimit,
    ReconcilerPass,
    ResetResult,
    SandboxEventList,
    SandboxFixtures,
    SettleResult,
    WebhookTarget,
)
from workbench.resources._base import AsyncResource, SyncResource, segment

__all__ = ["CHALLENGE_CODE", "AsyncSandbox", "FailureMode", "Sandbox"]

#: The one-time code the sandbox's 3-D Secure page accepts.
CHALLENGE_CODE = "123456"

FailureMode = Literal["429", "500", "timeout"]


def _non_negative(value: int, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"{name} must be a non-negative integer")
    return value


def _advance(seconds: int) -> RequestOptions:
    body = {"seconds": _non_negative(seconds, "seconds")}
    return RequestOptions("POST", "/sandbox/clock/advance", body)


def _fail_next(mode: FailureMode, seconds: int | None) -> RequestOptions:
    body: dict[str, object] = {"mode": mode}
    if seconds is not None:
        body["seconds"] = seconds
    return RequestOptions("POST", "/sandbox/fail-next", body)


def _latency(milliseconds: int) -> RequestOptions:
    body = {"milliseconds": _non_negative(milliseconds, "milliseconds")}
    return RequestOptions("POST", "/sandbox/latency", body)


def _rate_limit(per_second: float | None, burst: int) -> RequestOptions:
    return RequestOptions("POST", "/sandbox/rate-limit", {"perSecond": per_second, "burst": burst})


def _challenge(payment_id: str, correlation_id: str, code: str) -> RequestOptions:
    path = f"/sandbox/acs/{segment(payment_id, 'payment_id')}"
    body = {"correlationId": correlation_id, "code": code}
    return RequestOptions("POST", path, body, signed=False)


_FIXTURES = RequestOptions("GET", "/sandbox/fixtures")
_TICK = RequestOptions("POST", "/sandbox/reconciler/tick", {})
_SETTLE = RequestOptions("POST", "/sandbox/settle", {})
_RESET = RequestOptions("POST", "/sandbox/reset", {})


def _events(type: str | None) -> RequestOptions:
    return RequestOptions("GET", "/sandbox/events", params={"type": type})


def _deliveries(event_id: str) -> RequestOptions:
    return RequestOptions("GET", f"/sandbox/events/{segment(event_id, 'event_id')}/deliveries")


def _webhook(url: str | None) -> RequestOptions:
    return RequestOptions("PUT", "/sandbox/webhook", {"url": url})


class Sandbox(SyncResource):
    """Control routes of the local sandbox."""

    def fixtures(self) -> SandboxFixtures:
        """Your merchant, stores (with the webhook secret), customers and test cards.

        Returns:
            The demo data the sandbox created for your merchant.
        """
        return self._client.request(_FIXTURES, SandboxFixtures)

    def advance_clock(self, seconds: int) -> BusinessTime:
        """Move the business clock forward, running the work that falls due, in order.

        Args:
            seconds: how far to move the clock; 0 or more.

        Returns:
            The merchant's business time after the move.
        """
        return self._client.request(_advance(seconds), BusinessTime)

    def tick(self) -> ReconcilerPass:
        """Run one reconciler pass now (refunds, renewals, expiries, webhooks).

        Returns:
            How many items the pass processed, by kind of work.
        """
        return self._client.request(_TICK, ReconcilerPass)

    def settle(self) -> SettleResult:
        """Settle every in-flight refund now, then deliver due webhooks.

        Returns:
            How many refunds were settled.
        """
        return self._client.request(_SETTLE, SettleResult)

    def reset(self) -> ResetResult:
        """Delete your payments, subscriptions and events; restore the fixtures.

        Returns:
            How many rows were deleted, per table.
        """
        return self._client.request(_RESET, ResetResult)

    def events(self, type: str | None = None) -> SandboxEventList:
        """The events recorded for you, oldest first, with their delivery state.

        Args:
            type: only events of this type (``payment.captured``...).

        Returns:
            The events, each with its payload and delivery attempts.
        """
        return self._client.request(_events(type), SandboxEventList)

    def deliveries(self, event_id: str) -> EventDeliveries:
        """One event's delivery state and every attempt made (status code, error, next try)."""
        return self._client.request(_deliveries(event_id), EventDeliveries)

    def fail_next(self, mode: FailureMode, *, seconds: int | None = None) -> FailNext:
        """Make your next request fail once: ``429``, ``500`` or ``timeout`` (``seconds`` long).

        Args:
            mode: ``429``, ``500`` or ``timeout``.
            seconds: how long a ``timeout`` holds the request.

        Returns:
            The failure now armed.
        """
        return self._client.request(_fail_next(mode, seconds), FailNext)

    def set_latency(self, milliseconds: int) -> Latency:
        """Delay every response by ``milliseconds`` (0 turns it off).

        Args:
            milliseconds: added to every response; 0 or more.

        Returns:
            The latency now set.
        """
        return self._client.request(_latency(milliseconds), Latency)

    def set_rate_limit(self, per_second: float | None, *, burst: int = 1) -> RateLimit:
        """Set your rate limit; ``None`` restores the sandbox's default.

        Args:
            per_second: requests a second; ``None`` for the sandbox's default.
            burst: requests allowed at once above the rate.

        Returns:
            The limit now in force.
        """
        return self._client.request(_rate_limit(per_second, burst), RateLimit)

    def set_webhook(self, url: str | None) -> WebhookTarget:
        """Point your store's webhooks at ``url`` (``None`` removes it).

        Args:
            url: where events are delivered; ``None`` to stop delivering.

        Returns:
            The webhook target now set.
        """
        return self._client.request(_webhook(url), WebhookTarget)

    def answer_challenge(
        self, payment_id: str, correlation_id: str, *, code: str = CHALLENGE_CODE
    ) -> ChallengeAnswer:
        """Answer the 3-D Secure page as the buyer; the right code passes, others fail.

        Args:
            payment_id: the ``pay_`` id in ``pending_3ds``.
            correlation_id: the charge's ``correlation_id``.
            code: the one-time code typed; ``123456`` passes.

        Returns:
            The signed ``pares`` to pass to ``payments.complete_3ds`` and the ``result``.
        """
        return self._client.request(_challenge(payment_id, correlation_id, code), ChallengeAnswer)


class AsyncSandbox(AsyncResource):
    """Control routes of the local sandbox (async); see `Sandbox`."""

    async def fixtures(self) -> SandboxFixtures:
        """Your merchant, stores, customers and test cards."""
        return await self._client.request(_FIXTURES, SandboxFixtures)

    async def advance_clock(self, seconds: int) -> BusinessTime:
        """Move the business clock forward."""
        return await self._client.request(_advance(seconds), BusinessTime)

    async def tick(self) -> ReconcilerPass:
        """Run one reconciler pass now."""
        return await self._client.request(_TICK, ReconcilerPass)

    async def settle(self) -> SettleResult:
        """Settle every in-flight refund now."""
        return await self._client.request(_SETTLE, SettleResult)

    async def reset(self) -> ResetResult:
        """Delete your objects; restore the fixtures."""
        return await self._client.request(_RESET, ResetResult)

    async def events(self, type: str | None = None) -> SandboxEventList:
        """The events recorded for you."""
        return await self._client.request(_events(type), SandboxEventList)

    async def deliveries(self, event_id: str) -> EventDeliveries:
        """One event's delivery state and every attempt made."""
        return await self._client.request(_deliveries(event_id), EventDeliveries)

    async def fail_next(self, mode: FailureMode, *, seconds: int | None = None) -> FailNext:
        """Make your next request fail once."""
        return await self._client.request(_fail_next(mode, seconds), FailNext)

    async def set_latency(self, milliseconds: int) -> Latency:
        """Delay every response by ``milliseconds``."""
        return await self._client.request(_latency(milliseconds), Latency)

    async def set_rate_limit(self, per_second: float | None, *, burst: int = 1) -> RateLimit:
        """Set your rate limit; ``None`` restores the default."""
        return await self._client.request(_rate_limit(per_second, burst), RateLimit)

    async def set_webhook(self, url: str | None) -> WebhookTarget:
        """Point your store's webhooks at ``url``."""
        return await self._client.request(_webhook(url), WebhookTarget)

    async def answer_challenge(
        self, payment_id: str, correlation_id: str, *, code: str = CHALLENGE_CODE
    ) -> ChallengeAnswer:
        """Answer the 3-D Secure page as the buyer."""
        return await self._client.request(
            _challenge(payment_id, correlation_id, code), ChallengeAnswer
        )
