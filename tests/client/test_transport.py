"""The clients' transports: the AsyncClient's pools taken in turn, one shared SSL context."""

from __future__ import annotations

import asyncio
import http.server
import json
import ssl
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest

from tests.client import samples
from workbench import APIConnectionError
from workbench._base_client import ASYNC_POOLS, DEFAULT_LIMITS
from workbench._client import AsyncClient, Client
from workbench._transport import ShardedAsyncTransport


def test_requests_go_round_robin_and_close_closes_every_pool() -> None:
    seen: list[int] = []
    closed: list[int] = []

    class Shard(httpx2.MockTransport):
        def __init__(self, index: int) -> None:
            super().__init__(
                lambda request: (seen.append(index), httpx2.Response(200, json=samples.PAYMENT))[1]
            )
            self.index = index

        async def aclose(self) -> None:
            closed.append(self.index)

    async def run() -> None:
        transport = ShardedAsyncTransport([Shard(i) for i in range(3)])
        async with AsyncClient(
            "pk_test_a_0000", "sk_test_b_0000", "http://t", transport=transport
        ) as c:
            for _ in range(7):
                await c.payments.retrieve("pay_1")

    asyncio.run(run())
    assert seen == [0, 1, 2, 0, 1, 2, 0]
    assert sorted(closed) == [0, 1, 2]


def test_pools_share_the_limits() -> None:
    transport = ShardedAsyncTransport.pools(
        8, httpx2.Limits(max_connections=100, max_keepalive_connections=20)
    )
    assert len(transport.shards) == 8
    pool = transport.shards[0]._pool  # type: ignore[attr-defined]
    assert pool._max_connections == 13
    assert pool._max_keepalive_connections == 3


def test_async_client_uses_sharded_pools_by_default() -> None:
    async def run() -> httpx2.AsyncBaseTransport:
        async with AsyncClient("pk_test_a_0000", "sk_test_b_0000", "http://t") as c:
            return c._http._transport

    transport = asyncio.run(run())
    assert isinstance(transport, ShardedAsyncTransport)
    assert len(transport.shards) == ASYNC_POOLS
    assert DEFAULT_LIMITS.max_connections == 100


def test_no_shards_is_refused() -> None:
    with pytest.raises(ValueError, match="at least one"):
        ShardedAsyncTransport([])


@pytest.fixture(scope="module")
def self_signed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """An HTTPS server on 127.0.0.1 whose certificate no store trusts, and that certificate."""
    folder = tmp_path_factory.mktemp("tls")
    cert, key = folder / "cert.pem", folder / "key.pem"
    subject = ["-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"]
    files = ["-keyout", str(key), "-out", str(cert)]
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days=1", *subject, *files],
        check=True,
        capture_output=True,
    )

    class Answer(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = json.dumps(samples.PAYMENT).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Answer)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"https://127.0.0.1:{server.server_address[1]}", cert
    finally:
        server.shutdown()
        server.server_close()


def test_clients_sharing_one_ssl_context_still_refuse_an_untrusted_certificate(
    self_signed: tuple[str, Path],
) -> None:
    base, cert = self_signed
    keys = ("pk_test_a_0000", "sk_test_b_0000")
    for _ in range(2):  # the second client takes the context the first one built
        with Client(*keys, base, max_retries=0) as c, pytest.raises(APIConnectionError) as sync:
            c.payments.retrieve("pay_1")
        assert "CERTIFICATE_VERIFY_FAILED" in repr(sync.value.__cause__)

        async def run() -> None:
            async with AsyncClient(*keys, base, max_retries=0) as c:
                await c.payments.retrieve("pay_1")

        with pytest.raises(APIConnectionError) as unsure:
            asyncio.run(run())
        assert "CERTIFICATE_VERIFY_FAILED" in repr(unsure.value.__cause__)
    # The server itself answers a client that trusts its certificate.
    trust = ssl.create_default_context(cafile=str(cert))
    with httpx2.Client(verify=trust) as trusting, Client(*keys, base, http_client=trusting) as c:
        assert c.payments.retrieve("pay_1").id == samples.PAYMENT["id"]


def test_an_http_client_of_another_library_or_kind_is_refused() -> None:
    """An httpx 0.28 client (or any other object) would half work; it is refused at once."""

    class Client028:  # stands for httpx.Client: the same methods, another library
        pass

    keys = ("pk_test_a_0000", "sk_test_b_0000", "http://t")
    with pytest.raises(TypeError, match=r"must be an httpx2\.Client, not .*Client028 \("):
        Client(*keys, http_client=Client028())  # type: ignore[arg-type]

    async def run() -> None:
        with httpx2.Client() as blocking:
            AsyncClient(*keys, http_client=blocking)  # type: ignore[arg-type]

    with pytest.raises(TypeError, match=r"must be an httpx2\.AsyncClient, not httpx2\.Client"):
        asyncio.run(run())


def test_async_client_shards_its_pools_through_a_proxy_too() -> None:
    async def run() -> list[httpx2.AsyncBaseTransport | None]:
        async with AsyncClient(
            "pk_test_a_0000", "sk_test_b_0000", "http://t", proxy="http://127.0.0.1:9"
        ) as c:
            return list(c._http._mounts.values())

    mounted = asyncio.run(run())
    assert len(mounted) == 1
    assert isinstance(mounted[0], ShardedAsyncTransport)
    assert len(mounted[0].shards) == ASYNC_POOLS
    pool = mounted[0].shards[0]._pool  # type: ignore[attr-defined]
    assert pool._proxy_url.port == 9
