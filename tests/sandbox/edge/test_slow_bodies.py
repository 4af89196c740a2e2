"""Slow request bodies and idle connections cannot hold the sandbox, on both HTTP parsers.

A client that sent a complete head with ``Content-Length: 60000`` and then a body byte
now and then held its connection (and a task) for ever, on any path; hundreds of them
kept signed requests from being served. Now a body has a deadline from its head's end
(``body_timeout_seconds``) and a minimum average rate (``min_body_rate``), and one
address holds at most ``max_connections_per_address`` connections open: one more is
answered 429 in the envelope and closed. The slow clients here connect from other
loopback addresses (127.0.0.2, 127.0.0.3) than the signed client (127.0.0.1), each with
a bounded number of raw sockets; every wait is a generous guard, never a timing.
"""

from __future__ import annotations

import json
import socket
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import httpx2
import pytest

from tests.sandbox.bodies import charge_body
from tests.sandbox.clients import signed_client
from workbench.config import DEFAULT_API_KEY, DEFAULT_SECRET_KEY
from workbench.sandbox import SandboxConfig, SandboxServer
from workbench.signing import sign_request

IMPLEMENTATIONS = ["httptools", "h11"]
#: A generous guard against a hang; never asserted as a duration.
_GUARD_SECONDS = 30
CAP = 6
SLOW = "127.0.0.2"
IDLE = "127.0.0.3"


def _start(implementation: str, **settings: Any) -> SandboxServer:
    options = {"header_timeout_seconds": 1.0, "max_connections_per_address": CAP, **settings}
    config = SandboxConfig(
        db_url="sqlite://",
        run_reconciler_in_background=False,
        http_implementation=implementation,
        **options,
    )
    return SandboxServer(config).start()


@pytest.fixture(params=IMPLEMENTATIONS)
def served(request: pytest.FixtureRequest) -> Iterator[Callable[..., SandboxServer]]:
    """Start sandboxes on one HTTP implementation; each is stopped afterwards."""
    started: list[SandboxServer] = []

    def start(**settings: Any) -> SandboxServer:
        started.append(_start(request.param, **settings))
        return started[-1]

    yield start
    for server in started:
        server.stop()


def _connect(server: SandboxServer, source: str) -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind((source, 0))
    sock.connect((server.host, server.port))
    return sock


def _closed_by_server(sock: socket.socket) -> bool:
    """Whether the server closed the connection (EOF or reset) before the guard ran out."""
    sock.settimeout(_GUARD_SECONDS)
    try:
        while sock.recv(65536):
            pass
    except (ConnectionResetError, BrokenPipeError):
        return True
    except TimeoutError:
        return False
    return True


def _head(method: str, path: str, length: int, extra: dict[str, str] | None = None) -> bytes:
    lines = [f"{method} {path} HTTP/1.1", "Host: 127.0.0.1", f"Content-Length: {length}"]
    lines += [f"{name}: {value}" for name, value in (extra or {}).items()]
    lines += ["Content-Type: application/json"]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def _drip(sock: socket.socket, stop: threading.Event, every: float) -> None:
    """A body byte every ``every`` seconds until stopped or closed by the server."""
    try:
        while not stop.wait(every):
            sock.sendall(b"a")
    except OSError:
        return


@pytest.mark.parametrize("path", ["/nowhere", "/v1/payments/card"])
def test_slow_bodies_and_idle_connections_are_closed_while_a_signed_charge_is_served(
    served: Callable[..., SandboxServer], path: str
) -> None:
    server = served(body_timeout_seconds=2.0)
    stop = threading.Event()
    slow = [_connect(server, SLOW) for _ in range(CAP - 1)]
    for sock in slow:
        sock.sendall(_head("POST", path, 60_000))
    threads = [threading.Thread(target=_drip, args=(s, stop, 0.2), daemon=True) for s in slow]
    idle = [_connect(server, IDLE) for _ in range(CAP)]  # connect, send nothing
    for thread in threads:
        thread.start()
    try:
        with signed_client(server.base_url) as client:
            charged = client.post("/v1/payments/card", json=charge_body(threeDSecure=False))
            assert charged.status_code == 201, charged.text
        assert all(_closed_by_server(s) for s in [*slow, *idle])
    finally:
        stop.set()
        for thread in threads:
            thread.join(timeout=_GUARD_SECONDS)
        for sock in [*slow, *idle]:
            sock.close()


def test_a_body_below_the_minimum_rate_is_closed_before_its_deadline(
    served: Callable[..., SandboxServer],
) -> None:
    # A deadline longer than the guard: only the rate can close this one in time.
    server = served(body_timeout_seconds=600.0, min_body_rate=1024)
    stop = threading.Event()
    sock = _connect(server, SLOW)
    sock.sendall(_head("POST", "/nowhere", 60_000))
    thread = threading.Thread(target=_drip, args=(sock, stop, 0.2), daemon=True)
    thread.start()
    try:
        assert _closed_by_server(sock)
    finally:
        stop.set()
        thread.join(timeout=_GUARD_SECONDS)
        sock.close()


def test_a_charge_whose_body_never_ends_charges_nothing(
    served: Callable[..., SandboxServer],
) -> None:
    server = served(body_timeout_seconds=2.0)
    body = charge_body(threeDSecure=False)
    raw = json.dumps(body).encode()
    key = str(uuid.uuid4())
    signed = sign_request(
        api_key=DEFAULT_API_KEY,
        secret_key=DEFAULT_SECRET_KEY,
        method="POST",
        url="http://127.0.0.1/v1/payments/card",
        body=raw,
    ).as_dict()
    with _connect(server, SLOW) as sock:
        extra = {**signed, "Idempotency-Key": key}
        sock.sendall(_head("POST", "/v1/payments/card", len(raw), extra) + raw[:-1])
        assert _closed_by_server(sock)  # the last byte never came
    with signed_client(server.base_url) as client:
        first = client.post("/v1/payments/card", content=raw, headers={"Idempotency-Key": key})
    assert first.status_code == 201, first.text  # the key and transactionId were unused


def test_an_address_past_its_connection_cap_is_refused_429_and_others_are_served(
    served: Callable[..., SandboxServer],
) -> None:
    server = served(header_timeout_seconds=600.0)  # the idle ones stay open
    held = [_connect(server, IDLE) for _ in range(CAP)]
    try:
        with _connect(server, IDLE) as one_more:
            one_more.settimeout(_GUARD_SECONDS)
            answer = b""
            while chunk := one_more.recv(65536):
                answer += chunk
        head, _, body = answer.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 429 ")
        assert b"retry-after: 1" in head.lower()
        envelope = json.loads(body)
        assert envelope["code"] == "SVC-GW-1004"
        assert "connections from this address" in envelope["message"]
        # Another address is served meanwhile.
        assert httpx2.get(f"{server.base_url}/healthz", timeout=_GUARD_SECONDS).status_code == 200
    finally:
        for sock in held:
            sock.close()
    # Once the server has seen them closed, the address may connect again.
    deadline = time.monotonic() + _GUARD_SECONDS
    while True:
        with _connect(server, IDLE) as again:
            again.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            again.settimeout(_GUARD_SECONDS)
            status = again.recv(65536)[:13]
        if status == b"HTTP/1.1 200 " or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    assert status == b"HTTP/1.1 200 "
