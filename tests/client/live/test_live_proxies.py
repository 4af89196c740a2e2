"""Proxies: both clients go through ``proxy=`` or the environment's, and NO_PROXY bypasses.

A `RecordingProxy` on 127.0.0.1 forwards to the live sandbox and keeps what it forwarded,
so each test sees which requests went through it; the sandbox verifying the signature of
what the proxy forwarded shows the signed bytes arrived unchanged.
"""

from __future__ import annotations

import asyncio
import urllib.parse
import uuid
from collections.abc import Iterator
from typing import Any

import httpx2
import pytest

from tests.client.live.target import Live
from tests.client.wire import Received, RecordingProxy
from workbench._client import AsyncClient, Client
from workbench._transport import proxy_routes
from workbench.models import CheckoutSession

#: Non-ASCII text, sent as UTF-8: the bytes signed are not the characters typed.
DESCRIPTION = "Kahve çekirdeği, 250 g — öğütülmüş"

_PROXY_VARIABLES = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY")


@pytest.fixture
def proxy() -> Iterator[RecordingProxy]:
    with RecordingProxy().running() as running:
        yield running


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    """No proxy variable of the machine running the tests, in either case."""
    for name in _PROXY_VARIABLES:
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.lower(), raising=False)
    return monkeypatch


def _host(live: Live) -> str:
    host = urllib.parse.urlsplit(live.base_url).hostname
    assert host
    return host


def _create(client: Client) -> CheckoutSession:
    return client.sessions.create(
        transaction_id=f"order-{uuid.uuid4().hex[:12]}",
        amount=25_000,
        return_url="https://shop.example/return",
        description=DESCRIPTION,
    )


async def _create_async(client: AsyncClient) -> CheckoutSession:
    return await client.sessions.create(
        transaction_id=f"order-{uuid.uuid4().hex[:12]}",
        amount=25_000,
        return_url="https://shop.example/return",
        description=DESCRIPTION,
    )


def _run_async(live: Live, **kwargs: Any) -> CheckoutSession:
    async def run() -> CheckoutSession:
        async with AsyncClient(live.api_key, live.secret_key, live.base_url, **kwargs) as c:
            return await _create_async(c)

    return asyncio.run(run())


def _assert_went_through(proxy: RecordingProxy, live: Live, session: CheckoutSession) -> None:
    """The one request of the call went through the proxy, signed bytes and all."""
    assert session.status == "active"  # the sandbox verified the signature it received
    assert session.response is not None
    sent = session.response.http_response.request
    assert [(r.method, r.target) for r in proxy.forwarded] == [
        ("POST", f"{live.base_url}/v1/payments/sessions")  # absolute-form: a proxy request
    ]
    forwarded: Received = proxy.forwarded[0]
    assert forwarded.body == sent.content
    assert DESCRIPTION.encode() in forwarded.body
    assert forwarded.headers["x-signature"] == sent.headers["X-Signature"]


def test_client_goes_through_the_environments_proxy(
    live: Live, proxy: RecordingProxy, clean_env: pytest.MonkeyPatch
) -> None:
    clean_env.setenv("HTTP_PROXY", proxy.url)
    with live.client() as c:
        session = _create(c)
    _assert_went_through(proxy, live, session)


def test_async_client_goes_through_the_environments_proxy(
    live: Live, proxy: RecordingProxy, clean_env: pytest.MonkeyPatch
) -> None:
    """The AsyncClient's own sharded pools used to turn the environment's proxies off."""
    clean_env.setenv("http_proxy", proxy.url)
    session = _run_async(live)
    _assert_went_through(proxy, live, session)


@pytest.mark.parametrize("variable", ["NO_PROXY", "no_proxy"])
def test_no_proxy_bypasses_the_proxy_for_both_clients(
    live: Live, proxy: RecordingProxy, clean_env: pytest.MonkeyPatch, variable: str
) -> None:
    clean_env.setenv("HTTP_PROXY", proxy.url)
    clean_env.setenv(variable, f"example.org,{_host(live)}")
    with live.client() as c:
        assert _create(c).status == "active"
    assert _run_async(live).status == "active"
    assert proxy.forwarded == []


def test_no_proxy_leaves_other_hosts_on_the_proxy(
    live: Live, proxy: RecordingProxy, clean_env: pytest.MonkeyPatch
) -> None:
    """The bypass is for the hosts NO_PROXY names, not for every host."""
    clean_env.setenv("HTTP_PROXY", proxy.url)
    clean_env.setenv("NO_PROXY", "example.org")
    with live.client() as c:
        _assert_went_through(proxy, live, _create(c))
    proxy.forwarded.clear()
    _assert_went_through(proxy, live, _run_async(live))


@pytest.mark.parametrize("as_object", [False, True], ids=["url", "httpx2.Proxy"])
def test_the_proxy_argument_for_both_clients(
    live: Live, proxy: RecordingProxy, clean_env: pytest.MonkeyPatch, as_object: bool
) -> None:
    setting: str | httpx2.Proxy = httpx2.Proxy(proxy.url) if as_object else proxy.url
    with live.client(proxy=setting) as c:
        _assert_went_through(proxy, live, _create(c))
    proxy.forwarded.clear()
    _assert_went_through(proxy, live, _run_async(live, proxy=setting))


def test_the_proxy_argument_is_used_without_any_environment_variable(
    live: Live, proxy: RecordingProxy, clean_env: pytest.MonkeyPatch
) -> None:
    """And the environment's proxy is not used when the argument names another."""
    with RecordingProxy().running() as other:
        clean_env.setenv("HTTP_PROXY", other.url)
        with live.client(proxy=proxy.url) as c:
            _create(c)
        _run_async(live, proxy=proxy.url)
    assert len(proxy.forwarded) == 2
    assert other.forwarded == []


def test_a_transport_or_http_client_with_a_proxy_is_refused() -> None:
    keys = ("pk_test_a_0000", "sk_test_b_0000", "http://t")
    mock = httpx2.MockTransport(lambda request: httpx2.Response(200))
    with pytest.raises(ValueError, match="exclude each other"):
        Client(*keys, transport=mock, proxy="http://127.0.0.1:9")
    with httpx2.Client() as own, pytest.raises(ValueError, match="to your http_client"):
        Client(*keys, http_client=own, proxy="http://127.0.0.1:9")

    async def run() -> None:
        async with httpx2.AsyncClient() as own:
            with pytest.raises(ValueError, match="to your http_client"):
                AsyncClient(*keys, http_client=own, proxy="http://127.0.0.1:9")
        with pytest.raises(ValueError, match="exclude each other"):
            AsyncClient(*keys, transport=mock, proxy="http://127.0.0.1:9")

    asyncio.run(run())


def test_proxy_routes_read_the_environment_as_httpx2_does(
    clean_env: pytest.MonkeyPatch,
) -> None:
    assert proxy_routes(None) == {}
    clean_env.setenv("HTTPS_PROXY", "proxy.internal:3128")
    clean_env.setenv("NO_PROXY", "localhost,.shop.example,10.0.0.0/8")
    routes = proxy_routes(None)
    assert {pattern: str(p.url) if p else None for pattern, p in routes.items()} == {
        "https://": "http://proxy.internal:3128",
        "all://localhost": None,
        "all://*.shop.example": None,
        "all://10.0.0.0/8": None,
    }
    clean_env.setenv("NO_PROXY", "*")
    assert proxy_routes(None) == {}
    only = proxy_routes("http://127.0.0.1:9")
    assert list(only) == ["all://"]
