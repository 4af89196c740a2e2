"""A request that gets no answer, or an answer that is not the API's, says why and where.

Real sockets on 127.0.0.1 where the machine can show the failure (a closed port, a
plain-HTTP server spoken to in TLS, a web server that is not the API); a transport that
raises where it cannot without leaving the loopback (an unknown host needs DNS) or
without taking a fixed port (the sandbox's default 8765 may be in use).
"""

from __future__ import annotations

import asyncio
import http.server
import socket
import threading
from collections.abc import Iterator

import httpx2
import pytest

from tests.ports import free_port
from workbench import AsyncClient, Client
from workbench._exceptions import APIConnectionError, UnexpectedResponseError
from workbench._retry import RetryPolicy
from workbench.config import DEFAULT_API_KEY, DEFAULT_BASE_URL, DEFAULT_SECRET_KEY

QUICK = RetryPolicy(max_retries=1, initial_delay=0.01, max_delay=0.01)


class _Counting(http.server.BaseHTTPRequestHandler):
    """Python's own web server: answers POST with its HTML 501 page, counting requests."""

    hits = 0

    def handle_one_request(self) -> None:
        type(self).hits += 1
        super().handle_one_request()

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def web_server() -> Iterator[tuple[str, type[_Counting]]]:
    handler = type("Handler", (_Counting,), {"hits": 0})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"127.0.0.1:{server.server_port}", handler
    finally:
        server.shutdown()
        server.server_close()


def _charge(client: Client) -> None:
    client.payments.charge_card(transaction_id="t-1", amount=15_000, card_token="tok_test_success")


def test_a_closed_local_port_is_named_with_how_to_start_the_sandbox_there() -> None:
    port = free_port()
    client = Client(base_url=f"http://127.0.0.1:{port}", retry_policy=QUICK)
    with client, pytest.raises(APIConnectionError) as info:
        _charge(client)
    assert str(info.value) == (
        f"POST /v1/payments/card failed after 1 retries: connection refused by "
        f"127.0.0.1:{port}; is the local sandbox running? Start it with "
        f"`workbench sandbox --port {port}`"
    )
    assert info.value.retries == 1


def test_the_async_client_names_the_cause_too() -> None:
    port = free_port()

    async def charge() -> None:
        async with AsyncClient(base_url=f"http://127.0.0.1:{port}", max_retries=0) as client:
            await client.payments.charge_card(
                transaction_id="t-1", amount=15_000, card_token="tok_test_success"
            )

    with pytest.raises(APIConnectionError, match=f"connection refused by 127.0.0.1:{port};"):
        asyncio.run(charge())


def _raising(cause: BaseException) -> httpx2.MockTransport:
    def handler(request: httpx2.Request) -> httpx2.Response:
        raise httpx2.ConnectError(str(cause), request=request) from cause

    return httpx2.MockTransport(handler)


def test_the_default_address_says_how_to_start_the_sandbox() -> None:
    refused = _raising(ConnectionRefusedError(111, "Connection refused"))
    # The address given, not read from the environment (the suite sets its own sandbox's).
    with Client(base_url=DEFAULT_BASE_URL, transport=refused, max_retries=0) as client:
        assert client.base_url == DEFAULT_BASE_URL
        with pytest.raises(APIConnectionError) as info:
            _charge(client)
    assert str(info.value).endswith(
        "connection refused by 127.0.0.1:8765; is the local sandbox running? Start it with "
        "`workbench sandbox` (`make sandbox` in a clone)"
    )


def test_an_unknown_host_is_named() -> None:
    unknown = _raising(socket.gaierror(socket.EAI_NONAME, "Name or service not known"))
    url = "https://api.payments.invalid"
    with Client(DEFAULT_API_KEY, DEFAULT_SECRET_KEY, url, transport=unknown) as client:
        client._sleep = lambda _seconds: None
        with pytest.raises(APIConnectionError) as info:
            _charge(client)
    assert str(info.value) == (
        "POST /v1/payments/card failed after 2 retries: unknown host api.payments.invalid "
        "(DNS has no address for it)"
    )


def test_tls_spoken_to_a_plain_http_server_says_so_and_is_not_retried(
    web_server: tuple[str, type[_Counting]],
) -> None:
    address, handler = web_server
    client = Client(base_url=f"https://{address}", retry_policy=QUICK)
    with client, pytest.raises(APIConnectionError) as info:
        _charge(client)
    assert str(info.value) == (
        f"POST /v1/payments/card failed after 0 retries: TLS to {address} failed: the server "
        f"there speaks plain HTTP; use http://{address} (http://, not https://)"
    )
    assert handler.hits == 1


def test_a_web_server_that_is_not_the_api_is_reported_as_such_and_not_retried(
    web_server: tuple[str, type[_Counting]],
) -> None:
    address, handler = web_server
    client = Client(base_url=f"http://{address}", retry_policy=QUICK)
    with client, pytest.raises(UnexpectedResponseError) as info:
        _charge(client)
    assert str(info.value) == (
        f'(HTTP 501) {address} answered HTTP 501 with an HTML page ("Error response"), '
        f"not the API's JSON: is http://{address} the API's address?"
    )
    assert not info.value.retryable
    assert handler.hits == 1
