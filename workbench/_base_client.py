"""The plumbing `Client` and `AsyncClient` share: one call, many attempts.

A *call* is what the caller asked for (charge this card); an *attempt* is one
HTTP request for it. The body is serialised once per call and the
Idempotency-Key generated once per call, before the first attempt; each attempt
is signed afresh by `SigningAuth` with its own X-Timestamp. A call's own
``timeout``, ``max_retries`` and ``extra_headers`` (`CallOptions`) hold for all
its attempts; `BaseClient.with_options` makes a copy of the client with other
defaults over the same connection pool. Everything here is free of I/O except
the two small retry loops, which differ only by ``await``. Each attempt is an
OpenTelemetry span when ``opentelemetry-api`` is installed (`workbench._tracing`).
"""

from __future__ import annotations

import copy
import dataclasses
import json
import logging
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, timedelta
from email.utils import parsedate_to_datetime
from typing import TYPE_CHECKING, Any, Self, TypeVar, Unpack

import httpx2

from workbench._auth import SigningAuth
from workbench._exceptions import (
    APIConnectionError,
    APITimeoutError,
    SignatureError,
    UnexpectedResponseError,
    make_api_error,
)
from workbench._logs import configure_logging
from workbench._options import CallOptions, RequestOptions, check_headers, check_idempotency_key
from workbench._response import ResponseInfo
from workbench._retry import RetryPolicy
from workbench._tracing import attempt_span
from workbench._transport import (
    ProxySetting,
    ShardedAsyncTransport,
    default_ssl_context,
    proxy_routes,
)
from workbench._unreachable import (
    GATEWAY_STATUSES,
    describe_failure,
    describe_foreign_body,
    permanent,
)
from workbench._version import __version__
from workbench.config import Settings, mask_key, mask_secret

if TYPE_CHECKING:
    from workbench.models._base import APIObject

__all__ = [
    "DEFAULT_TIMEOUT",
    "AsyncAPIClient",
    "BaseClient",
    "CallObserver",
    "CallOptions",
    "RequestOptions",
    "SyncAPIClient",
]

log = logging.getLogger("workbench")

DEFAULT_TIMEOUT = 30.0
#: Keep as many idle connections as may be open: with httpx2's default of 20, a burst
#: of 50 concurrent calls would close 30 connections after each round and reconnect.
DEFAULT_LIMITS = httpx2.Limits(max_connections=100, max_keepalive_connections=100)
#: Connection pools an `AsyncClient` spreads its requests over (see `_transport`).
ASYNC_POOLS = 8
#: A learnt clock offset smaller than this is noise (the Date header has 1 s resolution).
_CLOCK_NOISE = timedelta(seconds=2)

ModelT = TypeVar("ModelT", bound="APIObject")

#: Called once per finished call with its response info and decoded JSON body.
CallObserver = Callable[[ResponseInfo, Any], None]


@dataclass(frozen=True, slots=True)
class _Call:
    options: RequestOptions
    content: bytes | None
    params: dict[str, str]
    retry: RetryPolicy
    timeout: float | httpx2.Timeout
    headers: dict[str, str] = field(default_factory=dict)

    @property
    def idempotency_key(self) -> str | None:
        return self.headers.get("Idempotency-Key")


def _serialise(body: Mapping[str, Any]) -> bytes:
    return json.dumps(body, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def _with_call_options(options: RequestOptions, call_options: CallOptions) -> RequestOptions:
    """``options`` with the per-call settings laid over it (``None`` keeps what it had)."""
    # ``**options`` is typed, but only for type checkers: refuse a misspelt name here too.
    unknown = sorted(set(call_options) - CallOptions.__optional_keys__)
    if unknown:
        raise TypeError(f"unexpected keyword argument {unknown[0]!r}")
    if not call_options:
        return options
    timeout = call_options.get("timeout")
    max_retries = call_options.get("max_retries")
    extra_headers = call_options.get("extra_headers")
    return dataclasses.replace(
        options,
        timeout=options.timeout if timeout is None else timeout,
        max_retries=options.max_retries if max_retries is None else max_retries,
        extra_headers=options.extra_headers if extra_headers is None else extra_headers,
    )


def _check_http_client(http_client: object, expected: type[object]) -> None:
    """Refuse an ``http_client`` of another library (plain httpx) or of the other kind."""
    if http_client is None or isinstance(http_client, expected):
        return
    kind = type(http_client)
    raise TypeError(
        f"http_client must be an httpx2.{expected.__name__}, not {kind.__module__}."
        f"{kind.__qualname__} (the client is built on httpx2, the maintained continuation "
        "of httpx: create it with `import httpx2`)"
    )


def _check_proxy(proxy: ProxySetting | None, http_client: object, transport: object) -> None:
    """``proxy`` configures the connections the client makes itself, so only those."""
    if proxy is None:
        return
    if http_client is not None:
        raise ValueError("give proxy= to your http_client, not to the client that uses it")
    if transport is not None:
        raise ValueError("proxy= and transport= exclude each other: a transport makes no proxy")


def _query_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


class BaseClient:
    """Settings, signing, retry decisions and response parsing shared by both clients."""

    def __init__(
        self,
        *,
        api_key: str | None,
        secret_key: str | None,
        base_url: str | None,
        timeout: float | httpx2.Timeout,
        max_retries: int,
        retry_policy: RetryPolicy | None,
        sync_clock: bool,
        settings: Settings | None,
        log_level: str | None,
        default_headers: Mapping[str, str] | None = None,
    ) -> None:
        if settings is None:
            settings = Settings.load(base_url=base_url, api_key=api_key, secret_key=secret_key)
        self._settings = settings
        self._auth = SigningAuth(settings.api_key, settings.secret_key)
        self._timeout = timeout
        self._retry = retry_policy or RetryPolicy(max_retries=max_retries)
        self._sync_clock = sync_clock
        self._custom_headers = check_headers(default_headers, "default_headers")
        self._owns_http = False
        self._observers: list[CallObserver] = []
        configure_logging(log_level)

    @property
    def base_url(self) -> str:
        """The service base address."""
        return self._settings.base_url

    @property
    def max_retries(self) -> int:
        """Retries after the first attempt."""
        return self._retry.max_retries

    @property
    def timeout(self) -> float | httpx2.Timeout:
        """The timeout of each attempt, unless a call gives its own."""
        return self._timeout

    @property
    def default_headers(self) -> dict[str, str]:
        """The headers given as ``default_headers``, sent on every call."""
        return dict(self._custom_headers)

    @property
    def clock_offset(self) -> timedelta:
        """The correction added to the local clock when stamping requests."""
        return self._auth.clock_offset

    def with_options(
        self,
        *,
        timeout: float | httpx2.Timeout | None = None,
        max_retries: int | None = None,
        retry_policy: RetryPolicy | None = None,
        default_headers: Mapping[str, str] | None = None,
    ) -> Self:
        """A copy of this client with other defaults, over the same connection pool.

        The copy shares the connections, the credentials, the clock offset learnt
        from the server and the observers (a `Tracker` attached to one sees the
        calls of both); its timeout, retries and headers are its own, and
        changing them never changes this client. Closing the copy leaves the
        connections open: close the client that made them.

        Example:
            ```python
            patient = client.with_options(timeout=60, max_retries=5)
            patient.payments.refund("pay_123")
            ```

        Args:
            timeout: seconds, or an `httpx2.Timeout`, per attempt (default: this client's).
            max_retries: retries after the first attempt (default: this client's);
                the backoff of the retry policy is kept.
            retry_policy: a whole new `RetryPolicy` (``max_retries``, if given too,
                is applied over it).
            default_headers: headers added to (or replacing by name) this client's.

        Returns:
            The configured copy, of the same class.

        Raises:
            ValueError: a header the client owns (see `OWNED_HEADERS`), or ``max_retries < 0``.
        """
        headers = {**self._custom_headers, **check_headers(default_headers, "default_headers")}
        policy = retry_policy or self._retry
        if max_retries is not None:
            policy = dataclasses.replace(policy, max_retries=max_retries)
        clone = copy.copy(self)
        clone._owns_http = False
        clone._timeout = self._timeout if timeout is None else timeout
        clone._retry = policy
        clone._custom_headers = headers
        clone._bind_resources()
        return clone

    def with_credentials(self, api_key: str, secret_key: str) -> Self:
        """A copy of this client signing with another key pair, over the same connections.

        Used for a merchant made on demand (`Sandbox.create_merchant`): its client shares
        this one's address, pool, timeout and retries. Closing the copy leaves the
        connections open: close the client that made them.

        Args:
            api_key: the other merchant's public key.
            secret_key: its secret key.
        """
        clone = self.with_options()
        clone._settings = dataclasses.replace(
            self._settings, api_key=api_key, secret_key=secret_key
        )
        clone._auth = SigningAuth(api_key, secret_key)
        clone._auth.clock_offset = self._auth.clock_offset
        clone._observers = []
        return clone

    def _bind_resources(self) -> None:
        """Create the resource namespaces over ``self`` (subclasses that have some)."""

    def add_observer(self, observer: CallObserver) -> None:
        """Call ``observer(info, body)`` after every finished call (success or API error).

        Args:
            observer: called with the call's `ResponseInfo` and its parsed body.
        """
        self._observers.append(observer)

    def remove_observer(self, observer: CallObserver) -> None:
        """Stop calling ``observer``.

        Args:
            observer: one added by `add_observer`.
        """
        self._observers.remove(observer)

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(base_url={self.base_url!r}, "
            f"api_key={mask_key(self._settings.api_key)!r}, max_retries={self.max_retries})"
        )

    def _default_headers(self) -> dict[str, str]:
        return {
            "Accept": "application/json",
            "User-Agent": f"payments-workbench-python/{__version__}",
            **self._custom_headers,
        }

    def _prepare(self, options: RequestOptions) -> _Call:
        headers = self._default_headers()
        headers.update(check_headers(options.extra_headers, "extra_headers"))
        retry = self._retry
        if options.max_retries is not None:
            retry = dataclasses.replace(retry, max_retries=options.max_retries)
        timeout = self._timeout if options.timeout is None else options.timeout
        content: bytes | None = None
        if options.body is not None:
            content = _serialise(options.body)
            headers["Content-Type"] = "application/json"
        key = options.idempotency_key
        if key is not None:
            check_idempotency_key(key)
        elif options.method == "POST":
            import uuid  # on the first POST: uuid imports platform, a tenth of the import

            key = str(uuid.uuid4())
        if key is not None:
            headers["Idempotency-Key"] = key
        params = {k: _query_value(v) for k, v in (options.params or {}).items() if v is not None}
        return _Call(
            options=options,
            content=content,
            params=params,
            retry=retry,
            timeout=timeout,
            headers=headers,
        )

    def _build_request(
        self, http: httpx2.Client | httpx2.AsyncClient, call: _Call
    ) -> httpx2.Request:
        return http.build_request(
            call.options.method,
            self.base_url + call.options.path,
            content=call.content,
            params=call.params or None,
            headers=call.headers,
            timeout=call.timeout,
        )

    def _auth_for(self, call: _Call) -> httpx2.Auth | None:
        return self._auth if call.options.signed else None

    def _learn_clock(self, response: httpx2.Response, code: str) -> bool:
        """After SVC-GW-1001, adopt the server's clock from ``Date`` if ours is off."""
        if not self._sync_clock or code != "SVC-GW-1001":
            return False
        date = response.headers.get("Date")
        if not date:
            return False
        try:
            server_now = parsedate_to_datetime(date)
        except (TypeError, ValueError):
            return False
        if server_now.tzinfo is None:
            server_now = server_now.replace(tzinfo=UTC)
        offset = server_now - self._auth.clock()
        if abs(offset - self._auth.clock_offset) < _CLOCK_NOISE:
            return False
        log.warning(
            "local clock is %+.0f s off the server's (Date: %s); stamping requests with the "
            "server's time from now on and retrying once",
            -offset.total_seconds(),
            date,
        )
        self._auth.clock_offset = offset
        return True

    def _retry_delay(
        self, call: _Call, response: httpx2.Response, retries: int
    ) -> tuple[float | None, str]:
        """The wait before retrying ``response``, or ``None`` not to retry; and its code."""
        code = ""
        try:
            body = response.json()
        except ValueError:
            body = None
        if isinstance(body, dict):
            code = str(body.get("code") or "")
        if retries >= call.retry.max_retries:
            return None, code
        if body is None and response.status_code not in GATEWAY_STATUSES:
            return None, code  # not the API answering: the same address answers the same
        if not call.retry.should_retry_response(response, code):
            return None, code
        return call.retry.delay(retries, response), code

    def _log_attempt(self, call: _Call, response: httpx2.Response, attempt: int) -> None:
        log.debug(
            "%s %s -> %d request_id=%s idempotency_key=%s attempt=%d",
            call.options.method,
            call.options.path,
            response.status_code,
            response.headers.get("X-Request-Id"),
            call.idempotency_key,
            attempt,
        )

    def _log_retry(self, call: _Call, retries: int, delay: float, reason: str) -> None:
        log.info(
            "retrying %s %s in %.2f s (retry %d of %d, idempotency_key=%s): %s",
            call.options.method,
            call.options.path,
            delay,
            retries + 1,
            call.retry.max_retries,
            call.idempotency_key,
            reason,
        )

    def _connection_error(
        self, exc: httpx2.TransportError, request: httpx2.Request, retries: int
    ) -> APIConnectionError:
        cls = APITimeoutError if isinstance(exc, httpx2.TimeoutException) else APIConnectionError
        what = "timed out" if cls is APITimeoutError else "failed"
        message = (
            f"{request.method} {request.url.path} {what} after {retries} retries: "
            f"{describe_failure(exc, request.url)}"
        )
        return cls(message, request=request, retries=retries)

    def _finish(
        self, call: _Call, response: httpx2.Response, retries: int, cast_to: type[ModelT]
    ) -> ModelT:
        """Turn the final response into a result, or raise its typed error."""
        try:
            body: Any = response.json()
        except ValueError:
            body = None
        object_id, object_state, object_alias = call.options.describe(
            body, success=response.is_success
        )
        info = ResponseInfo(
            method=call.options.method,
            path=call.options.path,
            status_code=response.status_code,
            headers=response.headers,
            request_id=response.headers.get("X-Request-Id"),
            idempotency_key=call.idempotency_key,
            retries=retries,
            http_response=response,
            action=call.options.action,
            object_id=object_id,
            object_state=object_state,
            object_alias=object_alias,
            options=call.options,
        )
        self._notify(info, body)
        if not response.is_success:
            error = make_api_error(response, retries=retries)
            if isinstance(error, SignatureError) and call.options.signed:
                error.likely_cause = self._key_pair_mismatch()
            raise error
        if not isinstance(body, dict):
            raise UnexpectedResponseError(
                code="",
                message=describe_foreign_body(response) or "the response body is not a JSON object",
                request_id=info.request_id,
                http_status=response.status_code,
                response=response,
                retries=retries,
            )
        result = cast_to.model_validate(body)
        result._response = info
        return result

    def _key_pair_mismatch(self) -> str:
        """Why a request this client signed can fail SVC-GW-1002: the canonical string
        it signed is the one the service rebuilds, so the secret key is the suspect."""
        return (
            "this client signed the request itself, so the canonical string is right: the "
            f"secret key ({mask_secret(self._settings.secret_key)}) most likely does not "
            f"belong to the API key ({mask_key(self._settings.api_key)}); use the key pair "
            "issued together for this environment"
        )

    def _notify(self, info: ResponseInfo, body: Any) -> None:
        for observer in list(self._observers):
            observer(info, body)


def _sharded_async_client(
    timeout: float | httpx2.Timeout,
    transport: httpx2.AsyncBaseTransport | None,
    proxy: ProxySetting | None,
) -> httpx2.AsyncClient:
    """An `httpx2.AsyncClient` over sharded pools, routed through proxies as `Client` is.

    httpx2 turns the environment's proxies off for a client given a transport, so the
    routes are mounted here: sharded pools through each proxy, and ``None`` (the default
    pools) for the addresses ``NO_PROXY`` names. A transport of the caller's is used as
    is, for every address.
    """
    if transport is not None:
        return httpx2.AsyncClient(timeout=timeout, transport=transport)
    mounts: dict[str, httpx2.AsyncBaseTransport | None] = {
        pattern: None
        if route is None
        else ShardedAsyncTransport.pools(ASYNC_POOLS, DEFAULT_LIMITS, proxy=route)
        for pattern, route in proxy_routes(proxy).items()
    }
    return httpx2.AsyncClient(
        timeout=timeout,
        transport=ShardedAsyncTransport.pools(ASYNC_POOLS, DEFAULT_LIMITS),
        mounts=mounts,
    )


class SyncAPIClient(BaseClient):
    """The blocking retry loop over an `httpx2.Client`."""

    def __init__(
        self,
        *,
        http_client: httpx2.Client | None,
        transport: httpx2.BaseTransport | None,
        proxy: ProxySetting | None = None,
        **kwargs: Any,
    ) -> None:
        _check_http_client(http_client, httpx2.Client)
        _check_proxy(proxy, http_client, transport)
        super().__init__(**kwargs)
        self._owns_http = http_client is None
        # Without a transport of the caller's, httpx2 itself routes through ``proxy`` or,
        # when it is None, the proxies of the environment (NO_PROXY included).
        self._http: httpx2.Client = http_client or httpx2.Client(
            timeout=self._timeout,
            transport=transport,
            proxy=proxy,
            limits=DEFAULT_LIMITS,
            verify=default_ssl_context(),
        )
        self._sleep: Callable[[float], None] = time.sleep

    def request(
        self, options: RequestOptions, cast_to: type[ModelT], **call_options: Unpack[CallOptions]
    ) -> ModelT:
        """Send one call, retrying as the policy allows, and parse its result.

        Args:
            options: the method, path, body and headers of the call.
            cast_to: the model to parse a successful answer into.
            **call_options: this call's ``timeout``, ``max_retries`` and ``extra_headers``
                (over those of ``options``).

        Returns:
            The parsed answer.

        Raises:
            APIError: the service answered with an error (its subclass names the code).
            APIConnectionError: no answer after the retries.
        """
        call = self._prepare(_with_call_options(options, call_options))
        retries = 0
        clock_learnt = False
        while True:
            request = self._build_request(self._http, call)
            try:
                with attempt_span(request, call.options, retries + 1, call.idempotency_key) as span:
                    try:
                        response = self._http.send(request, auth=self._auth_for(call))
                    except httpx2.TransportError as exc:
                        span.failed(exc)
                        raise
                    span.answered(response)
            except httpx2.TransportError as exc:
                if retries >= call.retry.max_retries or permanent(exc):
                    raise self._connection_error(exc, request, retries) from exc
                delay = call.retry.delay(retries)
                self._log_retry(call, retries, delay, type(exc).__name__)
                self._sleep(delay)
                retries += 1
                continue
            self._log_attempt(call, response, retries + 1)
            if response.is_success:
                return self._finish(call, response, retries, cast_to)
            wait, code = self._retry_delay(call, response, retries)
            if wait is None:
                if not clock_learnt and self._learn_clock(response, code):
                    clock_learnt = True
                    retries += 1
                    continue
                return self._finish(call, response, retries, cast_to)
            self._log_retry(call, retries, wait, f"HTTP {response.status_code} {code}".strip())
            self._sleep(wait)
            retries += 1

    def close(self) -> None:
        """Close the connections (only those of an `httpx2.Client` the client created)."""
        if self._owns_http:
            self._http.close()


class AsyncAPIClient(BaseClient):
    """The same retry loop over an `httpx2.AsyncClient`."""

    def __init__(
        self,
        *,
        http_client: httpx2.AsyncClient | None,
        transport: httpx2.AsyncBaseTransport | None,
        proxy: ProxySetting | None = None,
        **kwargs: Any,
    ) -> None:
        _check_http_client(http_client, httpx2.AsyncClient)
        _check_proxy(proxy, http_client, transport)
        super().__init__(**kwargs)
        self._owns_http = http_client is None
        if http_client is None:
            http_client = _sharded_async_client(self._timeout, transport, proxy)
        self._http: httpx2.AsyncClient = http_client
        import asyncio  # here, not at the top: a sync `Client` never needs the event loop

        self._sleep: Callable[[float], Awaitable[None]] = asyncio.sleep

    async def request(
        self, options: RequestOptions, cast_to: type[ModelT], **call_options: Unpack[CallOptions]
    ) -> ModelT:
        """Send one call, retrying as the policy allows, and parse its result."""
        call = self._prepare(_with_call_options(options, call_options))
        retries = 0
        clock_learnt = False
        while True:
            request = self._build_request(self._http, call)
            try:
                with attempt_span(request, call.options, retries + 1, call.idempotency_key) as span:
                    try:
                        response = await self._http.send(request, auth=self._auth_for(call))
                    except httpx2.TransportError as exc:
                        span.failed(exc)
                        raise
                    span.answered(response)
            except httpx2.TransportError as exc:
                if retries >= call.retry.max_retries or permanent(exc):
                    raise self._connection_error(exc, request, retries) from exc
                delay = call.retry.delay(retries)
                self._log_retry(call, retries, delay, type(exc).__name__)
                await self._sleep(delay)
                retries += 1
                continue
            self._log_attempt(call, response, retries + 1)
            if response.is_success:
                return self._finish(call, response, retries, cast_to)
            wait, code = self._retry_delay(call, response, retries)
            if wait is None:
                if not clock_learnt and self._learn_clock(response, code):
                    clock_learnt = True
                    retries += 1
                    continue
                return self._finish(call, response, retries, cast_to)
            self._log_retry(call, retries, wait, f"HTTP {response.status_code} {code}".strip())
            await self._sleep(wait)
            retries += 1

    async def close(self) -> None:
        """Close the connections (only those of an `httpx2.AsyncClient` the client created)."""
        if self._owns_http:
            await self._http.aclose()
