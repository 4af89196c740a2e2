"""A small threaded HTTP server that hands each POST to your webhook handler."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, Self

from workbench.spec.limits import MAX_BODY_BYTES

__all__ = ["ReceivedRequest", "WebhookReceiver"]

log = logging.getLogger("workbench.webhooks")


@dataclass(frozen=True, slots=True)
class ReceivedRequest:
    """One POST as the receiver got it.

    Attributes:
        path: the request path (with its query string, if any).
        headers: the headers, names in lowercase.
        body: the exact bytes of the body.
    """

    path: str
    headers: Mapping[str, str] = field(repr=False)
    body: bytes = field(repr=False)


#: A webhook handler: takes the request, returns the HTTP status to answer.
Handler = Callable[[ReceivedRequest], int]


class WebhookReceiver:
    """Serve ``POST`` on a local port in a background thread, answering what ``handler`` says.

    Each request and its answer are kept in `received`. A handler that raises is
    answered 500 (and logged by exception type only: the message might quote the body).

    Args:
        handler: called once per POST with the `ReceivedRequest`; returns the status.
        host: the address to listen on.
        port: the port; 0 picks a free one (read it back from `url`).
        path: the path shown in `url`.
    """

    def __init__(
        self,
        handler: Handler,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        path: str = "/webhooks",
    ) -> None:
        self._handle = handler
        self._host = host
        self._port = port
        self.path = path if path.startswith("/") else f"/{path}"
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        #: Every POST answered so far, with the status it was answered, oldest first.
        self.received: list[tuple[ReceivedRequest, int]] = []

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.url if self._server else 'stopped'})"

    @property
    def port(self) -> int:
        """The port listened on.

        Raises:
            RuntimeError: the receiver is not running.
        """
        if self._server is None:
            raise RuntimeError("the receiver is not running: call start()")
        return int(self._server.server_address[1])

    @property
    def url(self) -> str:
        """The address to give the service (the store webhook or a ``callbackUrl``).

        Raises:
            RuntimeError: the receiver is not running.
        """
        if self._server is None:
            raise RuntimeError("the receiver is not running: call start()")
        host = str(self._server.server_address[0])
        if ":" in host:
            host = f"[{host}]"
        return f"http://{host}:{self.port}{self.path}"

    def start(self) -> Self:
        """Start serving in a background thread; returns the receiver."""
        if self._server is not None:
            return self
        server = ThreadingHTTPServer((self._host, self._port), self._handler_class())
        server.daemon_threads = True
        self._server = server
        self._thread = threading.Thread(
            target=server.serve_forever,
            kwargs={"poll_interval": 0.05},
            name="workbench-webhooks",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and free the port."""
        if self._server is None:
            return
        self._server.shutdown()
        self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._server = None
        self._thread = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def _dispatch(self, request: ReceivedRequest) -> int:
        try:
            status = self._handle(request)
        except Exception as exc:
            log.warning("webhook handler failed: %s", type(exc).__name__)
            status = 500
        with self._lock:
            self.received.append((request, status))
        return status

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        receiver = self

        class _Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                try:
                    length = int(self.headers.get("Content-Length") or 0)
                except ValueError:
                    self._answer(400)
                    return
                if length < 0 or length > MAX_BODY_BYTES:
                    self._answer(413)
                    return
                body = self.rfile.read(length)
                headers = {k.lower(): v for k, v in self.headers.items()}
                self._answer(receiver._dispatch(ReceivedRequest(self.path, headers, body)))

            def _answer(self, status: int) -> None:
                ok = 200 <= status < 300
                body = b'{"received":true}' if ok else b'{"received":false}'
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: Any) -> None:
                log.debug("webhook receiver: " + format, *args)

        return _Handler
