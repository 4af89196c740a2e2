"""HTTP-level limits uvicorn has no setting for: a header-size cap on httptools, a header deadline.

Why this module subclasses uvicorn's protocols instead of configuring them:

- httptools (what uvicorn's ``auto`` picks when it is installed, as it is here) has no
  header-size limit at all: a request head grows in memory for as long as the client
  sends. h11 has one, ``h11_max_incomplete_event_size`` (passed by `uvicorn_settings`),
  but uvicorn answers it with a plain-text 400; here both answer **431** in the envelope.
- Neither has a deadline for the head: uvicorn's ``timeout_keep_alive`` only runs between
  two requests, so a client that connects and drips a header byte now and then holds a
  connection (and a file descriptor) for ever.

A head is refused once more than ``max_header_bytes`` of it arrived without it being
complete (h11's rule), or when a complete head measures more than that (request
target plus header lines): the answer does not depend on how TCP cut the bytes. A
connection whose head is not complete ``header_timeout`` seconds after it opened (or
after the head's first byte, on a kept-alive connection) is closed.
"""

from __future__ import annotations

import asyncio
import importlib.util
import logging
import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import h11
from uvicorn.config import Config
from uvicorn.protocols.http.h11_impl import H11Protocol
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
from uvicorn.server import ServerState

from workbench.sandbox.errors import envelope_bytes
from workbench.spec import ERRORS

__all__ = ["HEADERS_TOO_LARGE", "HttpLimits", "head_size"]

logger = logging.getLogger("workbench.sandbox")

#: The envelope code of a request whose head is too large.
HEADERS_TOO_LARGE = "SVC-GW-4031"


def head_size(target: bytes, headers: Iterable[tuple[bytes, bytes]]) -> int:
    """The size of a request head as the cap counts it: target plus ``name: value\\r\\n`` lines."""
    return len(target) + sum(len(name) + len(value) + 4 for name, value in headers)


def _refusal(limit: int, default_headers: Iterable[tuple[bytes, bytes]]) -> bytes:
    """The raw 431 answer: the envelope, a fresh request id, ``Connection: close``."""
    request_id = str(uuid.uuid4())
    message = f"request line and headers exceed {limit} bytes"
    body = envelope_bytes(HEADERS_TOO_LARGE, message, request_id)
    status = ERRORS[HEADERS_TOO_LARGE].http_status
    lines = [b"HTTP/1.1 %d Request Header Fields Too Large\r\n" % status]
    lines += [name + b": " + value + b"\r\n" for name, value in default_headers]
    lines += [
        b"content-type: application/json\r\n",
        b"content-length: %d\r\n" % len(body),
        b"x-request-id: " + request_id.encode("ascii") + b"\r\n",
        b"connection: close\r\n\r\n",
        body,
    ]
    return b"".join(lines)


class _HeadTooLarge(Exception):
    """Raised inside a parser callback to stop the parser on an oversized head."""


class _HeadGuard(asyncio.Protocol):
    """What both protocols share: the deadline timer and the 431 answer.

    First in each protocol's bases, so ``super()`` here is uvicorn's protocol.
    """

    transport: asyncio.Transport
    loop: asyncio.AbstractEventLoop
    server_state: ServerState
    limits: HttpLimits
    _head_timer: asyncio.TimerHandle | None
    _refused: bool

    def _init_guard(self, limits: HttpLimits) -> None:
        self.limits = limits
        self._head_timer = None
        self._refused = False

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._start_head_clock()

    def connection_lost(self, exc: Exception | None) -> None:
        self._stop_head_clock()
        super().connection_lost(exc)

    def _start_head_clock(self) -> None:
        if self._head_timer is None and self.limits.header_timeout > 0:
            self._head_timer = self.loop.call_later(self.limits.header_timeout, self._head_late)

    def _stop_head_clock(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None

    def _head_late(self) -> None:
        self._head_timer = None
        if not self.transport.is_closing():
            logger.info("closed a connection whose request head was not complete in time")
            self.transport.close()

    def _refuse_head(self) -> None:
        """Answer 431 and close; nothing more is read from this connection."""
        self._stop_head_clock()
        if self._refused or self.transport.is_closing():
            return
        self._refused = True
        self.transport.write(
            _refusal(self.limits.max_header_bytes, self.server_state.default_headers)
        )
        self.transport.close()


class _HttpToolsLimited(_HeadGuard, HttpToolsProtocol):
    """httptools with the head cap (bytes counted as they arrive) and the head deadline."""

    def __init__(self, *args: Any, limits: HttpLimits, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._init_guard(limits)
        self._head_pending = False
        self._head_received = 0
        self._too_large = False

    def data_received(self, data: bytes) -> None:
        if self._refused:
            return
        super().data_received(data)
        if self._head_pending and not self._refused:
            # Every byte of a read after which the head is still incomplete belongs to it.
            self._head_received += len(data)
            if self._head_received > self.limits.max_header_bytes:
                self._refuse_head()

    def send_400_response(self, msg: str) -> None:
        if self._too_large:  # the parser stopped on `_HeadTooLarge`
            self._refuse_head()
            return
        super().send_400_response(msg)

    def on_message_begin(self) -> None:
        super().on_message_begin()
        self._head_pending = True
        self._head_received = 0
        self._start_head_clock()

    def on_headers_complete(self) -> None:
        self._head_pending = False
        self._stop_head_clock()
        if head_size(self.url, self.headers) > self.limits.max_header_bytes:
            self._too_large = True
            raise _HeadTooLarge
        super().on_headers_complete()


class _LimitedConnection(h11.Connection):
    """h11's connection that also refuses a complete head over the cap, with the 431 hint."""

    def __init__(self, max_header_bytes: int) -> None:
        super().__init__(h11.SERVER, max_incomplete_event_size=max_header_bytes)
        self.max_header_bytes = max_header_bytes
        self.head_too_large = False

    def next_event(self) -> Any:
        try:
            event = super().next_event()
        except h11.RemoteProtocolError as exc:
            self.head_too_large = exc.error_status_hint == 431
            raise
        too_large = isinstance(event, h11.Request) and (
            head_size(event.target, event.headers.raw_items()) > self.max_header_bytes
        )
        if too_large:
            self.head_too_large = True
            raise h11.RemoteProtocolError("request head too large", error_status_hint=431)
        return event


class _H11Limited(_HeadGuard, H11Protocol):
    """h11 with its own incomplete-head cap answered as 431, the complete-head cap, the deadline."""

    def __init__(self, *args: Any, limits: HttpLimits, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._init_guard(limits)
        self.conn = _LimitedConnection(limits.max_header_bytes)

    def data_received(self, data: bytes) -> None:
        if self._refused:
            return
        super().data_received(data)
        if self.conn.their_state is h11.IDLE and self.conn.trailing_data[0]:
            self._start_head_clock()  # part of a head is waiting for the rest
        elif self.conn.their_state is not h11.IDLE:
            self._stop_head_clock()

    def send_400_response(self, msg: str) -> None:
        conn = self.conn
        if isinstance(conn, _LimitedConnection) and conn.head_too_large:
            self._refuse_head()
            return
        super().send_400_response(msg)


@dataclass(frozen=True, slots=True)
class HttpLimits:
    """The protocol factory uvicorn is given in place of a protocol class.

    ``workbench sandbox --workers`` processes build their own from the command's
    environment (`workbench.cli.sandbox.protocol_from_environment`).

    Attributes:
        max_header_bytes: the largest request head (request target and header lines).
        header_timeout: seconds a connection may take to send a complete head (0: no limit).
        implementation: ``"httptools"``, ``"h11"``, or ``"auto"`` (httptools when
            installed, as uvicorn's own ``auto``).
    """

    max_header_bytes: int = 32 * 1024
    header_timeout: float = 10.0
    implementation: str = "auto"

    @property
    def resolved(self) -> str:
        """The implementation ``auto`` stands for on this machine."""
        if self.implementation != "auto":
            return self.implementation
        return "httptools" if importlib.util.find_spec("httptools") else "h11"

    def __call__(
        self,
        config: Config,
        server_state: ServerState,
        app_state: dict[str, Any],
        _loop: asyncio.AbstractEventLoop | None = None,
    ) -> asyncio.Protocol:
        """Build one connection's protocol (uvicorn calls this per accepted connection)."""
        cls = _HttpToolsLimited if self.resolved == "httptools" else _H11Limited
        return cls(
            config=config, server_state=server_state, app_state=app_state, _loop=_loop, limits=self
        )

    def uvicorn_settings(self) -> dict[str, Any]:
        """Keyword arguments for `uvicorn.Config` / `uvicorn.run` that apply these limits."""
        if self.resolved not in ("httptools", "h11"):
            raise ValueError(f"unknown HTTP implementation {self.implementation!r}")
        return {"http": self, "h11_max_incomplete_event_size": self.max_header_bytes}
