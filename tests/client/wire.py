"""Real sockets on 127.0.0.1 for the client tests: a scripted server and a recording proxy.

`ScriptedServer` answers each request with the next scripted ``(status, body)`` and keeps
what it received; `RecordingProxy` is a plain HTTP forward proxy (absolute-form requests,
no CONNECT) that forwards each request unchanged and keeps what it forwarded. Both run in
a thread of the test's process and stop when their ``with`` block ends.
"""

from __future__ import annotations

import http.client
import http.server
import json
import threading
import urllib.parse
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

__all__ = ["Received", "RecordingProxy", "ScriptedServer"]

#: Hop-by-hop headers (RFC 9110 §7.6.1): a proxy does not forward them.
_HOP_BY_HOP = frozenset(
    {"connection", "keep-alive", "proxy-connection", "proxy-authorization", "te", "trailer"}
    | {"transfer-encoding", "upgrade"}
)


@dataclass(frozen=True)
class Received:
    """One request as it arrived: its method, target, headers and exact body bytes."""

    method: str
    target: str
    headers: dict[str, str]
    body: bytes


def _read(handler: http.server.BaseHTTPRequestHandler) -> Received:
    length = int(handler.headers.get("Content-Length") or 0)
    body = handler.rfile.read(length) if length else b""
    headers = {name.lower(): value for name, value in handler.headers.items()}
    return Received(handler.command, handler.path, headers, body)


def _reply(
    handler: http.server.BaseHTTPRequestHandler,
    status: int,
    body: bytes,
    headers: Sequence[tuple[str, str]] = (),
) -> None:
    handler.send_response_only(status)  # no Date or Server of our own beside the origin's
    for name, value in headers:
        handler.send_header(name, value)
    handler.send_header("Content-Length", str(len(body)))
    handler.end_headers()
    handler.wfile.write(body)


@contextmanager
def _serving(handler: type[http.server.BaseHTTPRequestHandler]) -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


class ScriptedServer:
    """Answers the requests it receives with ``script``'s ``(status, JSON body)``, in turn."""

    def __init__(self, script: Sequence[tuple[int, Any]]) -> None:
        self._script = list(script)
        self.received: list[Received] = []
        self.url = ""

    @contextmanager
    def running(self) -> Iterator[ScriptedServer]:
        """Serve on a free port (``self.url``) until the block ends."""
        owner = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def _answer(self) -> None:
                owner.received.append(_read(self))
                status, body = owner._script.pop(0) if owner._script else (500, {"code": "x"})
                raw = json.dumps(body).encode()
                _reply(self, status, raw, [("Content-Type", "application/json")])

            do_GET = do_POST = do_DELETE = _answer

            def log_message(self, *args: object) -> None:
                pass

        with _serving(Handler) as url:
            self.url = url
            yield self


class RecordingProxy:
    """An HTTP forward proxy on 127.0.0.1 that records every request it forwards."""

    def __init__(self) -> None:
        self.forwarded: list[Received] = []
        self.url = ""

    @contextmanager
    def running(self) -> Iterator[RecordingProxy]:
        """Proxy on a free port (``self.url``) until the block ends."""
        owner = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def _forward(self) -> None:
                received = _read(self)
                target = urllib.parse.urlsplit(received.target)
                if target.scheme != "http" or not target.hostname:
                    # Not a forward-proxy request (origin-form, or CONNECT): refuse it.
                    _reply(self, 400, b"absolute-form http:// requests only")
                    self.close_connection = True
                    return
                owner.forwarded.append(received)
                path = target.path + (f"?{target.query}" if target.query else "")
                headers = {
                    name: value
                    for name, value in received.headers.items()
                    if name not in _HOP_BY_HOP
                }
                upstream = http.client.HTTPConnection(target.hostname, target.port, timeout=30)
                try:
                    upstream.request(self.command, path, body=received.body, headers=headers)
                    answer = upstream.getresponse()
                    body = answer.read()
                    kept = [
                        (name, value)
                        for name, value in answer.getheaders()
                        if name.lower() not in _HOP_BY_HOP and name.lower() != "content-length"
                    ]
                finally:
                    upstream.close()
                _reply(self, answer.status, body, kept)

            do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_CONNECT = _forward

            def log_message(self, *args: object) -> None:
                pass

        with _serving(Handler) as url:
            self.url = url
            yield self
