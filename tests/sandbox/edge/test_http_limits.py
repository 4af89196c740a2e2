"""Limits for a sandbox on a shared machine, on both HTTP parsers uvicorn can run.

A request head over the cap is answered 431 in the envelope, early (without reading
the rest) and its connection closed; a connection that has not sent a complete head
within the header deadline is closed, while other clients are served; a 500 says
``Connection: close`` and the server closes, so a kept-alive client's next request
goes on a fresh connection. In-process servers (`SandboxServer`) and the
``workbench sandbox`` command, with and without ``--workers``, are both covered.
"""

from __future__ import annotations

import json
import os
import select
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import h11
import httpx2
import pytest
from fastapi import APIRouter

from tests.ports import free_port
from tests.sandbox.clients import signed_client
from tests.sandbox.envelope import assert_envelope
from workbench.config import DEFAULT_API_KEY, DEFAULT_SECRET_KEY
from workbench.sandbox import SandboxConfig, SandboxServer, create_app
from workbench.signing import sign_request

IMPLEMENTATIONS = ["httptools", "h11"]
_CHUNK = 64 * 1024
#: What a client tries to send as one header: far more than the cap (32 KiB).
_ATTEMPT = 64 * 1024 * 1024
#: A generous guard against a hang; never asserted as a duration.
_GUARD_SECONDS = 30


def _config(implementation: str, **settings: Any) -> SandboxConfig:
    """An in-memory sandbox without background reconciler on one HTTP implementation,
    whose request heads must arrive within 1 s."""
    return SandboxConfig(
        db_url="sqlite://",
        run_reconciler_in_background=False,
        http_implementation=implementation,
        header_timeout_seconds=1.0,
        **settings,
    )


@pytest.fixture(params=IMPLEMENTATIONS)
def server(request: pytest.FixtureRequest) -> Iterator[SandboxServer]:
    """An in-memory sandbox on a free port, on one HTTP implementation, 1 s header deadline."""
    config = _config(request.param)
    boom = APIRouter()

    @boom.get("/boom")
    def explode() -> None:
        raise RuntimeError("an unexpected failure inside a route")

    app = create_app(config, routers=[boom], public_routes=[("GET", r"^/boom$")])
    with SandboxServer(config, app=app) as running:
        yield running


def _read_response(sock: socket.socket) -> tuple[h11.Response, bytes]:
    """One response off a raw socket (h11 as the client's parser)."""
    conn = h11.Connection(h11.CLIENT)
    conn.send(h11.Request(method="GET", target="/", headers=[("Host", "x")]))
    conn.send(h11.EndOfMessage())
    head: h11.Response | None = None
    body = b""
    while True:
        event = conn.next_event()
        if event is h11.NEED_DATA:
            conn.receive_data(sock.recv(65536))
            continue
        if isinstance(event, h11.Response):
            head = event
        elif isinstance(event, h11.Data):
            body += bytes(event.data)
        elif isinstance(event, h11.EndOfMessage):
            assert head is not None
            return head, body


def _closed_by_server(sock: socket.socket) -> bool:
    """Whether the server closed the connection (EOF or reset) before the guard ran out."""
    sock.settimeout(_GUARD_SECONDS)
    try:
        while True:
            data = sock.recv(65536)
            if not data:
                return True
    except (ConnectionResetError, BrokenPipeError):
        return True
    except TimeoutError:
        return False


def _send_huge_head(host: str, port: int) -> tuple[int, bytes]:
    """Send a head with one header growing chunk by chunk; stop once the server answers.

    Returns how many header bytes went out and everything the server sent back.
    """
    sock = socket.create_connection((host, port))
    sent = 0
    try:
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Huge: ")
        chunk = b"a" * _CHUNK
        try:
            while sent < _ATTEMPT:
                if select.select([sock], [], [], 0)[0]:
                    break  # the server has answered (or closed): stop sending
                sock.sendall(chunk)
                sent += len(chunk)
            else:
                sock.sendall(b"\r\n\r\n")
        except (BrokenPipeError, ConnectionResetError):
            pass  # the server closed while we were still sending
        received = b""
        sock.settimeout(_GUARD_SECONDS)
        try:
            while data := sock.recv(65536):
                received += data
        except ConnectionResetError:
            pass
        return sent, received
    finally:
        sock.close()


def _parse_raw(raw: bytes) -> tuple[int, dict[str, str], dict[str, Any]]:
    head, _, body = raw.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    headers = {k.lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:])}
    return status, headers, json.loads(body)


def _assert_431(sent: int, received: bytes) -> None:
    # Far less than the 64 MiB went out (what did sat in kernel buffers, never read).
    assert sent < _ATTEMPT // 4, f"{sent} bytes of the head went out before an answer"
    status, headers, body = _parse_raw(received)
    assert status == 431
    assert headers["connection"] == "close"
    assert headers["content-type"] == "application/json"
    assert set(body) == {"code", "message", "requestId"}
    assert body["code"] == "SVC-GW-4031"
    assert "32768 bytes" in body["message"]
    assert body["requestId"] == headers["x-request-id"]


def test_head_over_the_cap_sent_in_chunks_is_refused_early(server: SandboxServer) -> None:
    sent, received = _send_huge_head(server.host, server.port)
    _assert_431(sent, received)
    assert httpx2.get(server.base_url + "/healthz").status_code == 200


def test_head_over_the_cap_in_one_write_is_431_and_one_under_it_is_served(
    server: SandboxServer,
) -> None:
    over = httpx2.get(server.base_url + "/healthz", headers={"X-Big": "a" * 40_000})
    assert_envelope(over, 431, "SVC-GW-4031")
    assert over.headers["connection"] == "close"
    under = httpx2.get(server.base_url + "/healthz", headers={"X-Big": "a" * 30_000})
    assert under.status_code == 200


def test_slow_headers_are_closed_while_other_clients_are_served(server: SandboxServer) -> None:
    stop = threading.Event()
    slow = [socket.create_connection((server.host, server.port)) for _ in range(8)]
    silent = socket.create_connection((server.host, server.port))  # connects, sends nothing

    def drip(sock: socket.socket) -> None:
        try:
            sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n")
            while not stop.wait(0.2):
                sock.sendall(b"X-Drip: 1\r\n")  # a header line now and then, never the end
        except OSError:
            return  # closed by the server

    threads = [threading.Thread(target=drip, args=(s,), daemon=True) for s in slow]
    for thread in threads:
        thread.start()
    try:
        with signed_client(server.base_url) as client:
            assert client.get("/sandbox/fixtures").status_code == 200
        assert httpx2.get(server.base_url + "/healthz").status_code == 200
        assert all(_closed_by_server(s) for s in [*slow, silent])
    finally:
        stop.set()
        for thread in threads:
            thread.join(timeout=_GUARD_SECONDS)
        for sock in [*slow, silent]:
            sock.close()


def _signed_get(path: str) -> bytes:
    """A signed GET, as raw bytes for a kept-alive socket."""
    headers = sign_request(
        api_key=DEFAULT_API_KEY,
        secret_key=DEFAULT_SECRET_KEY,
        method="GET",
        url="http://127.0.0.1" + path,
        body=b"",
    ).as_dict()
    lines = [f"GET {path} HTTP/1.1", "Host: 127.0.0.1"]
    lines += [f"{name}: {value}" for name, value in headers.items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def test_fail_next_500_says_connection_close_and_the_server_closes(server: SandboxServer) -> None:
    with signed_client(server.base_url) as client:
        assert client.post("/sandbox/fail-next", json={"mode": "500"}).status_code == 200
    with socket.create_connection((server.host, server.port)) as sock:
        sock.sendall(_signed_get("/v1/payments/pay_000000000000000000000000"))
        head, body = _read_response(sock)
        assert head.status_code == 500
        assert dict(head.headers)[b"connection"] == b"close"
        assert json.loads(body)["code"] == "SVC-GW-5000"
        assert _closed_by_server(sock)
    with signed_client(server.base_url) as client:  # a new connection works
        assert client.get("/sandbox/fixtures").status_code == 200


def test_unexpected_500_says_connection_close_and_the_next_request_works(
    server: SandboxServer,
) -> None:
    with httpx2.Client(base_url=server.base_url, timeout=_GUARD_SECONDS, verify=False) as client:
        failed = client.get("/boom")
        assert_envelope(failed, 500, "SVC-GW-5000")
        assert failed.headers["connection"] == "close"
        # The same client (keep-alive pool) opens a fresh connection: no reset.
        assert client.get("/healthz").status_code == 200


def test_ordinary_answers_keep_the_connection_alive(server: SandboxServer) -> None:
    with socket.create_connection((server.host, server.port)) as sock:
        for _ in range(2):
            sock.sendall(_signed_get("/sandbox/fixtures"))
            head, _ = _read_response(sock)
            assert head.status_code == 200
            assert b"connection" not in dict(head.headers)


@pytest.fixture(params=IMPLEMENTATIONS)
def brief_server(request: pytest.FixtureRequest) -> Iterator[SandboxServer]:
    """An in-memory sandbox whose kept-alive connections idle 1 s at most, 1 s head deadline."""
    config = _config(request.param, keep_alive_seconds=1)
    with SandboxServer(config) as running:
        yield running


def _served(sock: socket.socket) -> bool:
    """Whether a signed GET on ``sock`` is answered 200 (the connection still open)."""
    try:
        sock.sendall(_signed_get("/sandbox/fixtures"))
        head, _ = _read_response(sock)
    except (OSError, h11.RemoteProtocolError):
        return False
    return head.status_code == 200


def test_a_busy_connection_outlives_both_deadlines_and_closes_once_idle(
    brief_server: SandboxServer,
) -> None:
    # The deadlines are times a timer checks when it fires (not a timer per request):
    # requests for three deadlines' worth keep one connection, then idling ends it.
    with socket.create_connection((brief_server.host, brief_server.port)) as sock:
        sock.settimeout(_GUARD_SECONDS)
        for _ in range(10):
            assert _served(sock)
            time.sleep(0.3)
        assert _closed_by_server(sock)


def test_a_head_started_on_a_kept_alive_connection_has_its_deadline(
    brief_server: SandboxServer,
) -> None:
    # After a response the connection waits for its next head; one that starts and
    # never ends is closed by the head's deadline (the idle one stopped with its bytes).
    with socket.create_connection((brief_server.host, brief_server.port)) as sock:
        sock.settimeout(_GUARD_SECONDS)
        assert _served(sock)
        stop = threading.Event()

        def drip() -> None:
            try:
                sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n")
                while not stop.wait(0.2):
                    sock.sendall(b"X-Drip: 1\r\n")
            except OSError:
                return

        thread = threading.Thread(target=drip, daemon=True)
        thread.start()
        try:
            assert _closed_by_server(sock)
        finally:
            stop.set()
            thread.join(timeout=_GUARD_SECONDS)


# --- the command, with and without --workers, in its own process tree ---------------


def _tree(pid: int) -> list[int]:
    """``pid`` and its descendants."""
    found = [pid]
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rpartition(")")[2].split()[1]) == pid:
                found.extend(_tree(int(entry.name)))
    return found


def _rss_bytes(pids: list[int]) -> dict[int, int]:
    """Resident memory of each process that is still there."""
    sizes = {}
    for pid in pids:
        try:
            status = Path(f"/proc/{pid}/status").read_text()
        except OSError:
            continue
        for line in status.splitlines():
            if line.startswith("VmRSS:"):
                sizes[pid] = int(line.split()[1]) * 1024
    return sizes


@pytest.fixture(
    scope="module", params=[("httptools", 1), ("h11", 2)], ids=["httptools", "h11-workers-2"]
)
def command(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[str, int, subprocess.Popen[bytes]]]:
    """``workbench sandbox`` on a free port: (host, port, process)."""
    if not Path("/proc").is_dir():
        print("measuring a server's memory reads /proc (Linux only); skipped")
        pytest.skip("measuring a server's memory reads /proc (Linux only)")
    implementation, workers = request.param
    port = free_port()
    command = [sys.executable, "-m", "workbench", "sandbox", "--port", str(port)]
    database = tmp_path_factory.mktemp("limits") / "sandbox.db"
    command += ["--db", f"sqlite:///{database}", "--no-reconciler"]
    command += ["--http", implementation, "--workers", str(workers), "--header-timeout", "1"]
    env = {**os.environ, "WORKBENCH_API_KEY": "", "WORKBENCH_SECRET_KEY": ""}
    proc = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 120  # a busy machine starts workers slowly
        while True:
            assert proc.poll() is None, "the sandbox exited while starting"
            assert time.monotonic() < deadline, "the sandbox did not start within 120 s"
            try:
                healthz = httpx2.get(f"http://127.0.0.1:{port}/healthz", timeout=2, verify=False)
                if healthz.status_code == 200:
                    break
            except httpx2.TransportError:
                time.sleep(0.2)
        if workers > 1:
            while len(_tree(proc.pid)) < workers + 1:
                assert time.monotonic() < deadline, "the workers did not start within 120 s"
                time.sleep(0.2)
        yield "127.0.0.1", port, proc
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_command_refuses_huge_heads_early_with_bounded_memory(
    command: tuple[str, int, subprocess.Popen[bytes]],
) -> None:
    host, port, proc = command
    for _ in range(4):  # warm every worker's first requests up before measuring
        assert httpx2.get(f"http://{host}:{port}/healthz").status_code == 200
    pids = _tree(proc.pid)
    before = _rss_bytes(pids)
    peak = dict(before)
    done = threading.Event()

    def watch() -> None:  # the peak while the clients send, not what is left afterwards
        while not done.is_set():
            for pid, size in _rss_bytes(pids).items():
                peak[pid] = max(peak.get(pid, 0), size)
            done.wait(0.005)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    results: list[tuple[int, bytes]] = []
    threads = [
        threading.Thread(target=lambda: results.append(_send_huge_head(host, port)))
        for _ in range(4)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=300)
    done.set()
    watcher.join(timeout=_GUARD_SECONDS)
    # Processes present throughout (uvicorn may replace a worker that starts slowly).
    grown = sum(peak[pid] - before[pid] for pid in peak.keys() & before.keys())
    assert len(results) == 4
    for sent, received in results:
        _assert_431(sent, received)
    # Four clients each tried to send 64 MiB of header; the server kept a few KiB of each.
    assert grown < 32 * 1024 * 1024, f"the server grew by {grown} bytes"
    assert httpx2.get(f"http://{host}:{port}/healthz").status_code == 200


def test_command_closes_slow_headers(command: tuple[str, int, subprocess.Popen[bytes]]) -> None:
    host, port, _ = command
    with socket.create_connection((host, port)) as sock:
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        assert httpx2.get(f"http://{host}:{port}/healthz").status_code == 200
        assert _closed_by_server(sock)
