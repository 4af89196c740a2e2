"""A local webhook receiver whose answer a test sets: 500 first, then fixed.

Shared by the dashboard's HTTP and browser tests.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

__all__ = ["Receiver", "receiving"]


class Receiver:
    """What the receiver answers, and what it got.

    Attributes:
        status: the status it answers with.
        body: the body it answers with.
        received: the ``X-Event-Id`` and ``X-Event-Attempt`` of each delivery.
        url: where it listens.
    """

    def __init__(self) -> None:
        self.status = 500
        self.body = b"receiver broken: card 4242 4242 4242 4242 echoed"
        self.received: list[tuple[str, str]] = []
        self.url = ""
        self.lock = threading.Lock()


@contextlib.contextmanager
def receiving() -> Iterator[Receiver]:
    """A receiver on a free 127.0.0.1 port until the block ends."""
    receiver = Receiver()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", "0"))
            self.rfile.read(length)
            with receiver.lock:
                receiver.received.append(
                    (self.headers.get("X-Event-Id", ""), self.headers.get("X-Event-Attempt", ""))
                )
                status, body = receiver.status, receiver.body
            self.send_response(status)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    receiver.url = f"http://127.0.0.1:{server.server_address[1]}/hooks"
    try:
        yield receiver
    finally:
        server.shutdown()
        server.server_close()
