"""`Client` and `AsyncClient`: the same constructor, the same namespaces, sync or async."""

from __future__ import annotations

from collections.abc import Mapping
from types import TracebackType

import httpx2

from workbench._base_client import DEFAULT_TIMEOUT, AsyncAPIClient, SyncAPIClient
from workbench._retry import DEFAULT_MAX_RETRIES, RetryPolicy
from workbench._transport import ProxySetting
from workbench.config import Settings
from workbench.resources import (
    AsyncCards,
    AsyncPayments,
    AsyncPortal,
    AsyncSandbox,
    AsyncSessions,
    AsyncSubscriptions,
    Cards,
    Payments,
    Portal,
    Sandbox,
    Sessions,
    Subscriptions,
)

__all__ = ["AsyncClient", "Client"]


class Client(SyncAPIClient):
    """The blocking client of the payments service.

    Credentials and address come from the arguments, else ``WORKBENCH_*``
    environment variables, else ``.env``, else the local sandbox's demo
    defaults. Use it as a context manager, or call `close`.

    Example:
        ```python
        with Client() as client:
            charge = client.payments.charge_card(
                transaction_id="order-1", amount=12_500, card_token="tok_test_success"
            )
            print(charge.status, charge.idempotency_key)
        ```

    Args:
        api_key: the public key (``pk_``).
        secret_key: the secret key (``sk_``), used only to sign.
        base_url: the service address (default: the local sandbox).
        timeout: seconds, or an `httpx2.Timeout`, per attempt.
        max_retries: retries after the first attempt (default 2).
        retry_policy: full control of retries and backoff (overrides ``max_retries``).
        http_client: an `httpx2.Client` of your own (it is not closed by `close`).
        transport: an httpx2 transport for the client's own `httpx2.Client` (tests).
        proxy: the proxy every request goes through (a URL such as
            ``"http://proxy.internal:3128"``, or an `httpx2.Proxy`). Left out, the
            client follows ``HTTP_PROXY``, ``HTTPS_PROXY``, ``ALL_PROXY`` and
            ``NO_PROXY``, as `AsyncClient` does; neither applies with ``http_client``
            (configure yours) or ``transport`` (combining either with ``proxy`` is a
            ``ValueError``).
        sync_clock: learn the server's clock from ``Date`` after a timestamp rejection.
        settings: resolved `Settings` (overrides the three credentials arguments).
        log_level: ``debug``/``info``/``warning``; default reads ``WORKBENCH_LOG``.
        default_headers: headers sent on every call (a proxy's, a trace id); the
            headers the client owns (signature, timestamp, API key, Idempotency-Key,
            Content-Type) are refused with a ``ValueError``.

    Every resource method also takes ``timeout``, ``max_retries`` and
    ``extra_headers`` for that call alone (`CallOptions`), and every POST method an
    ``idempotency_key``; `with_options` makes a copy with other defaults.
    """

    payments: Payments
    cards: Cards
    sessions: Sessions
    subscriptions: Subscriptions
    portal: Portal
    sandbox: Sandbox[Client]

    def __init__(
        self,
        api_key: str | None = None,
        secret_key: str | None = None,
        base_url: str | None = None,
        *,
        timeout: float | httpx2.Timeout = DEFAULT_TIMEOUT,
        max_retries: int = DEFAULT_MAX_RETRIES,
        retry_policy: RetryPolicy | None = None,
        http_client: httpx2.Client | None = None,
        transport: httpx2.BaseTransport | None = None,
        proxy: ProxySetting | None = None,
        sync_clock: bool = True,
        settings: Settings | None = None,
        log_level: str | None = None,
        default_headers: Mapping[str, str] | None = None,
    ) -> None:
        super().__init__(
            http_client=http_client,
            transport=transport,
            proxy=proxy,
            api_key=api_key,
            secret_key=secret_key,
            base_url=base_url,
            timeout=timeout,
            max_retries=max_retries,
            retry_policy=retry_policy,
            sync_clock=sync_clock,
            settings=settings,
            log_level=log_level,
            default_headers=default_headers,
        )
        self._bind_resources()

    def _bind_resources(self) -> None:
        self.payments = Payments(self)
        self.cards = Cards(self)
        self.sessions = Sessions(self)
        self.subscriptions = Subscriptions(self)
        self.portal = Portal(self)
        self.sandbox = Sandbox(self)

    def __enter__(self) -> Client:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


class AsyncClient(AsyncAPIClient):
    """The asyncio client: `Client`'s constructor and namespaces, with awaitable methods.

    Example:
        ```python
        async with AsyncClient() as client:
            payment = await client.payments.retrieve("pay_123")
        ```
    """

    payments: AsyncPayments
    cards: AsyncCards
    sessions: AsyncSessions
    subscriptions: AsyncSubscriptions
    portal: AsyncPortal
    sandbox: AsyncSandbox[AsyncClient]

    def __init__(
        self,
        api_key: str | None = None,
        secret_key: str | None = None,
        base_url: str | None = None,
        *,
        timeout: float | httpx2.Timeout = DEFAULT_TIMEOUT,
        max_retries: int = DEFAULT_MAX_RETRIES,
        retry_policy: RetryPolicy | None = None,
        http_client: httpx2.AsyncClient | None = None,
        transport: httpx2.AsyncBaseTransport | None = None,
        proxy: ProxySetting | None = None,
        sync_clock: bool = True,
        settings: Settings | None = None,
        log_level: str | None = None,
        default_headers: Mapping[str, str] | None = None,
    ) -> None:
        super().__init__(
            http_client=http_client,
            transport=transport,
            proxy=proxy,
            api_key=api_key,
            secret_key=secret_key,
            base_url=base_url,
            timeout=timeout,
            max_retries=max_retries,
            retry_policy=retry_policy,
            sync_clock=sync_clock,
            settings=settings,
            log_level=log_level,
            default_headers=default_headers,
        )
        self._bind_resources()

    def _bind_resources(self) -> None:
        self.payments = AsyncPayments(self)
        self.cards = AsyncCards(self)
        self.sessions = AsyncSessions(self)
        self.subscriptions = AsyncSubscriptions(self)
        self.portal = AsyncPortal(self)
        self.sandbox = AsyncSandbox(self)

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()
