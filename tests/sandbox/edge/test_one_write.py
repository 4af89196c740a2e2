"""A response's head goes out with its body's first bytes (`HeadWithBody`), on a real
connection and write by write."""

from __future__ import annotations

import socket
from dataclasses import dataclass, field

from workbench.sandbox import SandboxConfig, SandboxServer
from workbench.sandbox.edge.onewrite import HeadWithBody


@dataclass
class _Cycle:
    response_started: bool = False


@dataclass
class _Transport:
    writes: list[bytes] = field(default_factory=list)
    closed: bool = False

    def write(self, data: bytes) -> None:
        self.writes.append(data)

    def close(self) -> None:
        self.closed = True

    def is_closing(self) -> bool:
        return self.closed


def _wrapped(method: str = "POST") -> tuple[_Cycle, _Transport, HeadWithBody]:
    cycle, transport = _Cycle(), _Transport()
    return cycle, transport, HeadWithBody(cycle, transport, method)  # type: ignore[arg-type]


def test_the_head_waits_for_the_body_and_later_writes_go_straight() -> None:
    cycle, transport, wrapped = _wrapped()
    cycle.response_started = True
    wrapped.write(b"HEAD\r\n\r\n")
    assert transport.writes == []
    wrapped.write(b"body")
    wrapped.write(b"more")
    assert transport.writes == [b"HEAD\r\n\r\nbody", b"more"]


def test_what_comes_before_the_response_goes_at_once() -> None:
    cycle, transport, wrapped = _wrapped()
    wrapped.write(b"HTTP/1.1 100 Continue\r\n\r\n")
    assert transport.writes == [b"HTTP/1.1 100 Continue\r\n\r\n"]
    cycle.response_started = True
    wrapped.write(b"HEAD\r\n\r\n")
    wrapped.write(b"")
    assert transport.writes[1:] == [b"HEAD\r\n\r\n"]


def test_a_head_request_head_is_not_held() -> None:
    cycle, transport, wrapped = _wrapped("HEAD")
    cycle.response_started = True
    wrapped.write(b"HEAD\r\n\r\n")
    assert transport.writes == [b"HEAD\r\n\r\n"]


def test_closing_writes_a_held_head_first() -> None:
    cycle, transport, wrapped = _wrapped()
    cycle.response_started = True
    wrapped.write(b"HEAD\r\n\r\n")
    wrapped.close()
    assert transport.writes == [b"HEAD\r\n\r\n"]
    assert wrapped.is_closing()


def _answer(sock: socket.socket, request: bytes) -> bytes:
    sock.sendall(request)
    received = b""
    while b"\r\n\r\n" not in received:
        chunk = sock.recv(65536)
        assert chunk, "the server closed the connection"
        received += chunk
    return received


def test_a_served_response_arrives_whole_and_a_head_request_still_answers() -> None:
    config = SandboxConfig(
        db_url="sqlite://", run_reconciler_in_background=False, http_implementation="httptools"
    )
    with SandboxServer(config) as server:
        host, port = server.base_url.removeprefix("http://").split(":")
        with socket.create_connection((host, int(port)), timeout=30) as sock:
            target = b" /openapi.json HTTP/1.1\r\nHost: " + host.encode() + b"\r\n\r\n"
            got = _answer(sock, b"GET" + target)
            head, _, body = got.partition(b"\r\n\r\n")
            assert head.startswith(b"HTTP/1.1 200")
            length = int(head.lower().split(b"content-length: ")[1].split(b"\r\n")[0])
            while len(body) < length:
                body += sock.recv(65536)
            assert len(body) == length
            # The same connection, a HEAD: its head is written alone (no body follows).
            head_only = _answer(sock, b"HEAD" + target)
            assert head_only.startswith(b"HTTP/1.1 ")
            assert head_only.endswith(b"\r\n\r\n")
