"""The local sandbox's control routes (``/sandbox/*``): signed, scoped to your merchant.

They exist only in the workbench's sandbox, never in the real service: they
show the built-in fixtures, move the business clock, run the background
reconciler now, settle refunds, and inject failures, latency and rate limits so
that retries and waits can be tried out. `Sandbox.answer_challenge` plays the
buyer on the sandbox's 3-D Secure page.

`Sandbox.create_merchant` makes a merchant of your own (its store, keys, customers and
business clock), isolated from every other: one per engineer, notebook run or test,
so nothing you do resets or moves anyone else's data. It answers with the new
credentials, and a client already signed with them (`MerchantCredentials.client`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Generic, Literal, TypeVar, Unpack

from workbench import models
from workbench._base_client import AsyncAPIClient, SyncAPIClient
from workbench._options import CallOptions, RequestOptions
from workbench.resources._base import AsyncResource, SyncResource, segment

if TYPE_CHECKING:
    from workbench.models import (
        AuthorizationLifetime,
        BusinessTime,
        ChallengeAnswer,
        EventDeliveries,
        FailNext,
        Latency,
        MerchantCredentials,
        MerchantDeletion,
        MerchantList,
        RateLimit,
        ReconcilerPass,
        ResetResult,
        SandboxEventList,
        SandboxFixtures,
        SettleResult,
        WebhookTarget,
    )

__all__ = ["CHALLENGE_CODE", "AsyncSandbox", "FailureMode", "Sandbox"]

#: The one-time code the sandbox's 3-D Secure page accepts.
CHALLENGE_CODE = "123456"

FailureMode = Literal["429", "500", "timeout"]


def _non_negative(value: int, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"{name} must be a non-negative integer")
    return value


def _post(
    path: str, action: str, body: dict[str, object], key: str | None, *, signed: bool = True
) -> RequestOptions:
    return RequestOptions("POST", path, body, signed=signed, idempotency_key=key, action=action)


def _advance(seconds: int, key: str | None) -> RequestOptions:
    body: dict[str, object] = {"seconds": _non_negative(seconds, "seconds")}
    return _post("/sandbox/clock/advance", "advance_clock", body, key)


def _fail_next(mode: FailureMode, seconds: int | None, key: str | None) -> RequestOptions:
    body: dict[str, object] = {"mode": mode}
    if seconds is not None:
        body["seconds"] = seconds
    return _post("/sandbox/fail-next", "fail_next", body, key)


def _latency(milliseconds: int, key: str | None) -> RequestOptions:
    body: dict[str, object] = {"milliseconds": _non_negative(milliseconds, "milliseconds")}
    return _post("/sandbox/latency", "set_latency", body, key)


def _rate_limit(per_second: float | None, burst: int, key: str | None) -> RequestOptions:
    body: dict[str, object] = {"perSecond": per_second, "burst": burst}
    return _post("/sandbox/rate-limit", "set_rate_limit", body, key)


def _lifetime(seconds: int | None, key: str | None) -> RequestOptions:
    if seconds is not None and (_non_negative(seconds, "seconds") == 0):
        raise ValueError("seconds must be at least 1 (None restores the default)")
    body: dict[str, object] = {"seconds": seconds}
    return _post("/sandbox/authorization-lifetime", "set_authorization_lifetime", body, key)


def _challenge(payment_id: str, correlation_id: str, code: str, key: str | None) -> RequestOptions:
    # The buyer's page, played by the sandbox; not a call of the merchant's on the payment.
    path = f"/sandbox/acs/{segment(payment_id, 'payment_id')}"
    body: dict[str, object] = {"correlationId": correlation_id, "code": code}
    return _post(path, "answer_challenge", body, key, signed=False)


def _tick(key: str | None) -> RequestOptions:
    return _post("/sandbox/reconciler/tick", "tick", {}, key)


def _settle(key: str | None) -> RequestOptions:
    return _post("/sandbox/settle", "settle", {}, key)


def _reset(key: str | None) -> RequestOptions:
    return _post("/sandbox/reset", "reset", {}, key)


_FIXTURES = RequestOptions("GET", "/sandbox/fixtures", action="fixtures")


def _events(type: str | None) -> RequestOptions:
    return RequestOptions("GET", "/sandbox/events", params={"type": type}, action="events")


def _deliveries(event_id: str) -> RequestOptions:
    path = f"/sandbox/events/{segment(event_id, 'event_id')}/deliveries"
    return RequestOptions("GET", path, action="deliveries")


def _webhook(url: str | None) -> RequestOptions:
    return RequestOptions("PUT", "/sandbox/webhook", {"url": url}, action="set_webhook")


def _admin(options: CallOptions, admin_token: str | None) -> CallOptions:
    """``options`` with the admin token a team sandbox asks for (``Authorization``)."""
    if admin_token is None:
        return options
    headers = {**(options.get("extra_headers") or {}), "Authorization": f"Bearer {admin_token}"}
    return {**options, "extra_headers": headers}


def _create_merchant(name: str | None, key: str | None) -> RequestOptions:
    body: dict[str, object] = {} if name is None else {"name": name}
    return _post("/sandbox/merchants", "create_merchant", body, key, signed=False)


_MERCHANTS = RequestOptions("GET", "/sandbox/merchants", signed=False, action="merchants")


def _delete_merchant(merchant_id: str, admin_token: str | None) -> RequestOptions:
    # With the admin token the request goes unsigned; else it is signed with this
    # client's keys (its own merchant, or any on a sandbox only this machine reaches).
    path = f"/sandbox/merchants/{segment(merchant_id, 'merchant_id')}"
    return RequestOptions(
        "DELETE", path, signed=admin_token is None, action="delete_merchant", object_id=merchant_id
    )


SyncClientT = TypeVar("SyncClientT", bound=SyncAPIClient)
AsyncClientT = TypeVar("AsyncClientT", bound=AsyncAPIClient)


class Sandbox(SyncResource, Generic[SyncClientT]):
    """Control routes of the local sandbox."""

    def __init__(self, client: SyncClientT) -> None:
        super().__init__(client)
        self._owner = client

    def create_merchant(
        self,
        name: str | None = None,
        *,
        admin_token: str | None = None,
        idempotency_key: str | None = None,
        **options: Unpack[CallOptions],
    ) -> MerchantCredentials[SyncClientT]:
        """Make a merchant of your own: store, key pair, webhook secret, the built-in
        customers with their saved test cards, and a business clock of its own.

        Example:
            ```python
            mine = client.sandbox.create_merchant(name="my laptop")
            mine.client.payments.charge_card(
                transaction_id="order-1", amount=12_500, card_token="tok_test_success"
            )
            ```

        Args:
            name: what to call it (at most 100 characters).
            admin_token: the sandbox's admin token, needed only on a sandbox reachable
                beyond loopback (a team host).

        Returns:
            Its credentials (the secret key is shown this once, never by ``repr``), and
            ``.client``, a client of the same class signed with them.
        """
        made: MerchantCredentials[SyncClientT] = self._client.request(
            _create_merchant(name, idempotency_key),
            models.MerchantCredentials,
            **_admin(options, admin_token),
        )
        made.bind_client(self._owner.with_credentials(made.api_key, made.secret_key))
        return made

    def list_merchants(
        self, *, admin_token: str | None = None, **options: Unpack[CallOptions]
    ) -> MerchantList:
        """Every merchant of the sandbox: id, name, made, last used (no secret).

        Args:
            admin_token: needed only on a sandbox reachable beyond loopback.
        """
        return self._client.request(_MERCHANTS, models.MerchantList, **_admin(options, admin_token))

    def delete_merchant(
        self, merchant_id: str, *, admin_token: str | None = None, **options: Unpack[CallOptions]
    ) -> MerchantDeletion:
        """Delete a merchant made on demand and all its data; its keys stop working.

        Signed with this client's keys (its own merchant; any, on a sandbox only this
        machine reaches), or, with ``admin_token``, sent with the admin token instead.

        Args:
            merchant_id: the ``mrc_`` id.
            admin_token: the sandbox's admin token (a team host).

        Returns:
            Rows deleted per table.
        """
        return self._client.request(
            _delete_merchant(merchant_id, admin_token),
            models.MerchantDeletion,
            **_admin(options, admin_token),
        )

    def fixtures(self, **options: Unpack[CallOptions]) -> SandboxFixtures:
        """Your merchant, stores (with the webhook secret), customers and test cards.

        Returns:
            The demo data the sandbox created for your merchant.
        """
        return self._client.request(_FIXTURES, models.SandboxFixtures, **options)

    def advance_clock(
        self, seconds: int, *, idempotency_key: str | None = None, **options: Unpack[CallOptions]
    ) -> BusinessTime:
        """Move the business clock forward, running the work that falls due, in order.

        Args:
            seconds: how far to move the clock; 0 or more.

        Returns:
            The merchant's business time after the move.
        """
        return self._client.request(
            _advance(seconds, idempotency_key), models.BusinessTime, **options
        )

    def tick(
        self, *, idempotency_key: str | None = None, **options: Unpack[CallOptions]
    ) -> ReconcilerPass:
        """Run one reconciler pass now (refunds, renewals, expiries, webhooks).

        Returns:
            How many items the pass processed, by kind of work.
        """
        return self._client.request(_tick(idempotency_key), models.ReconcilerPass, **options)

    def settle(
        self, *, idempotency_key: str | None = None, **options: Unpack[CallOptions]
    ) -> SettleResult:
        """Settle every in-flight refund now, then deliver due webhooks.

        Returns:
            How many refunds were settled.
        """
        return self._client.request(_settle(idempotency_key), models.SettleResult, **options)

    def reset(
        self, *, idempotency_key: str | None = None, **options: Unpack[CallOptions]
    ) -> ResetResult:
        """Delete your payments, subscriptions and events; restore the fixtures.

        Returns:
            How many rows were deleted, per table.
        """
        return self._client.request(_reset(idempotency_key), models.ResetResult, **options)

    def events(self, type: str | None = None, **options: Unpack[CallOptions]) -> SandboxEventList:
        """The events recorded for you, oldest first, with their delivery state.

        Args:
            type: only events of this type (``payment.captured``...).

        Returns:
            The events, each with its payload and delivery attempts.
        """
        return self._client.request(_events(type), models.SandboxEventList, **options)

    def deliveries(self, event_id: str, **options: Unpack[CallOptions]) -> EventDeliveries:
        """One event's delivery state and every attempt made (status code, error, next try)."""
        return self._client.request(_deliveries(event_id), models.EventDeliveries, **options)

    def fail_next(
        self,
        mode: FailureMode,
        *,
        seconds: int | None = None,
        idempotency_key: str | None = None,
        **options: Unpack[CallOptions],
    ) -> FailNext:
        """Make your next request fail once: ``429``, ``500`` or ``timeout`` (``seconds`` long).

        Args:
            mode: ``429``, ``500`` or ``timeout``.
            seconds: how long a ``timeout`` holds the request.

        Returns:
            The failure now armed.
        """
        return self._client.request(
            _fail_next(mode, seconds, idempotency_key), models.FailNext, **options
        )

    def set_latency(
        self,
        milliseconds: int,
        *,
        idempotency_key: str | None = None,
        **options: Unpack[CallOptions],
    ) -> Latency:
        """Delay every response by ``milliseconds`` (0 turns it off).

        Args:
            milliseconds: added to every response; 0 or more.

        Returns:
            The latency now set.
        """
        return self._client.request(
            _latency(milliseconds, idempotency_key), models.Latency, **options
        )

    def set_rate_limit(
        self,
        per_second: float | None,
        *,
        burst: int = 1,
        idempotency_key: str | None = None,
        **options: Unpack[CallOptions],
    ) -> RateLimit:
        """Set your rate limit; ``None`` restores the sandbox's default.

        Args:
            per_second: requests a second; ``None`` for the sandbox's default.
            burst: requests allowed at once above the rate.

        Returns:
            The limit now in force.
        """
        return self._client.request(
            _rate_limit(per_second, burst, idempotency_key), models.RateLimit, **options
        )

    def set_authorization_lifetime(
        self,
        seconds: int | None,
        *,
        idempotency_key: str | None = None,
        **options: Unpack[CallOptions],
    ) -> AuthorizationLifetime:
        """Set how long your authorizations wait for a capture; ``None`` restores 7 days.

        Counted in business time from each authorization, those already made included;
        past it the payment is voided (``payment.voided``) and a capture is refused.

        Args:
            seconds: the lifetime, at least 1; ``None`` for the sandbox's default.

        Returns:
            The lifetime now in force.
        """
        return self._client.request(
            _lifetime(seconds, idempotency_key), models.AuthorizationLifetime, **options
        )

    def set_webhook(self, url: str | None, **options: Unpack[CallOptions]) -> WebhookTarget:
        """Point your store's webhooks at ``url`` (``None`` removes it).

        Args:
            url: where events are delivered; ``None`` to stop delivering.

        Returns:
            The webhook target now set.
        """
        return self._client.request(_webhook(url), models.WebhookTarget, **options)

    def answer_challenge(
        self,
        payment_id: str,
        correlation_id: str,
        *,
        code: str = CHALLENGE_CODE,
        idempotency_key: str | None = None,
        **options: Unpack[CallOptions],
    ) -> ChallengeAnswer:
        """Answer the 3-D Secure page as the buyer; the right code passes, others fail.

        Args:
            payment_id: the ``pay_`` id in ``pending_3ds``.
            correlation_id: the charge's ``correlation_id``.
            code: the one-time code typed; ``123456`` passes.

        Returns:
            The signed ``pares`` to pass to ``payments.complete_3ds`` and the ``result``.
        """
        return self._client.request(
            _challenge(payment_id, correlation_id, code, idempotency_key),
            models.ChallengeAnswer,
            **options,
        )


class AsyncSandbox(AsyncResource, Generic[AsyncClientT]):
    """Control routes of the local sandbox (async); see `Sandbox`."""

    def __init__(self, client: AsyncClientT) -> None:
        super().__init__(client)
        self._owner = client

    async def create_merchant(
        self,
        name: str | None = None,
        *,
        admin_token: str | None = None,
        idempotency_key: str | None = None,
        **options: Unpack[CallOptions],
    ) -> MerchantCredentials[AsyncClientT]:
        """Make a merchant of your own; its credentials and ``.client``, an `AsyncClient`."""
        made: MerchantCredentials[AsyncClientT] = await self._client.request(
            _create_merchant(name, idempotency_key),
            models.MerchantCredentials,
            **_admin(options, admin_token),
        )
        made.bind_client(self._owner.with_credentials(made.api_key, made.secret_key))
        return made

    async def list_merchants(
        self, *, admin_token: str | None = None, **options: Unpack[CallOptions]
    ) -> MerchantList:
        """Every merchant of the sandbox (no secret)."""
        return await self._client.request(
            _MERCHANTS, models.MerchantList, **_admin(options, admin_token)
        )

    async def delete_merchant(
        self, merchant_id: str, *, admin_token: str | None = None, **options: Unpack[CallOptions]
    ) -> MerchantDeletion:
        """Delete a merchant made on demand and all its data."""
        return await self._client.request(
            _delete_merchant(merchant_id, admin_token),
            models.MerchantDeletion,
            **_admin(options, admin_token),
        )

    async def fixtures(self, **options: Unpack[CallOptions]) -> SandboxFixtures:
        """Your merchant, stores, customers and test cards."""
        return await self._client.request(_FIXTURES, models.SandboxFixtures, **options)

    async def advance_clock(
        self, seconds: int, *, idempotency_key: str | None = None, **options: Unpack[CallOptions]
    ) -> BusinessTime:
        """Move the business clock forward."""
        return await self._client.request(
            _advance(seconds, idempotency_key), models.BusinessTime, **options
        )

    async def tick(
        self, *, idempotency_key: str | None = None, **options: Unpack[CallOptions]
    ) -> ReconcilerPass:
        """Run one reconciler pass now."""
        return await self._client.request(_tick(idempotency_key), models.ReconcilerPass, **options)

    async def settle(
        self, *, idempotency_key: str | None = None, **options: Unpack[CallOptions]
    ) -> SettleResult:
        """Settle every in-flight refund now."""
        return await self._client.request(_settle(idempotency_key), models.SettleResult, **options)

    async def reset(
        self, *, idempotency_key: str | None = None, **options: Unpack[CallOptions]
    ) -> ResetResult:
        """Delete your objects; restore the fixtures."""
        return await self._client.request(_reset(idempotency_key), models.ResetResult, **options)

    async def events(
        self, type: str | None = None, **options: Unpack[CallOptions]
    ) -> SandboxEventList:
        """The events recorded for you."""
        return await self._client.request(_events(type), models.SandboxEventList, **options)

    async def deliveries(self, event_id: str, **options: Unpack[CallOptions]) -> EventDeliveries:
        """One event's delivery state and every attempt made."""
        return await self._client.request(_deliveries(event_id), models.EventDeliveries, **options)

    async def fail_next(
        self,
        mode: FailureMode,
        *,
        seconds: int | None = None,
        idempotency_key: str | None = None,
        **options: Unpack[CallOptions],
    ) -> FailNext:
        """Make your next request fail once."""
        return await self._client.request(
            _fail_next(mode, seconds, idempotency_key), models.FailNext, **options
        )

    async def set_latency(
        self,
        milliseconds: int,
        *,
        idempotency_key: str | None = None,
        **options: Unpack[CallOptions],
    ) -> Latency:
        """Delay every response by ``milliseconds``."""
        return await self._client.request(
            _latency(milliseconds, idempotency_key), models.Latency, **options
        )

    async def set_rate_limit(
        self,
        per_second: float | None,
        *,
        burst: int = 1,
        idempotency_key: str | None = None,
        **options: Unpack[CallOptions],
    ) -> RateLimit:
        """Set your rate limit; ``None`` restores the default."""
        return await self._client.request(
            _rate_limit(per_second, burst, idempotency_key), models.RateLimit, **options
        )

    async def set_authorization_lifetime(
        self,
        seconds: int | None,
        *,
        idempotency_key: str | None = None,
        **options: Unpack[CallOptions],
    ) -> AuthorizationLifetime:
        """Set how long your authorizations wait for a capture; ``None`` restores 7 days."""
        return await self._client.request(
            _lifetime(seconds, idempotency_key), models.AuthorizationLifetime, **options
        )

    async def set_webhook(self, url: str | None, **options: Unpack[CallOptions]) -> WebhookTarget:
        """Point your store's webhooks at ``url``."""
        return await self._client.request(_webhook(url), models.WebhookTarget, **options)

    async def answer_challenge(
        self,
        payment_id: str,
        correlation_id: str,
        *,
        code: str = CHALLENGE_CODE,
        idempotency_key: str | None = None,
        **options: Unpack[CallOptions],
    ) -> ChallengeAnswer:
        """Answer the 3-D Secure page as the buyer."""
        return await self._client.request(
            _challenge(payment_id, correlation_id, code, idempotency_key),
            models.ChallengeAnswer,
            **options,
        )
