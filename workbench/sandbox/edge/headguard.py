"""What the sandbox's two HTTP protocols share: the request head's deadline and its 431 answer.

`workbench.sandbox.httplimits` says why the sandbox subclasses uvicorn's protocols; the
httptools one is there, the h11 one in `workbench.sandbox.edge.h11limits`, which loads only
when h11 serves (``--http h11``, or httptools missing).
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import uuid
from collections.abc import Iterable
from typing import Protocol

from uvicorn.server import ServerState

from workbench.sandbox.errors import envelope_bytes
from workbench.spec import ERRORS

__all__ = ["HEADERS_TOO_LARGE", "HeadGuard", "HeadLimits", "head_size"]

logger = logging.getLogger("workbench.sandbox")

#: The envelope code of a request whose head is too large.
HEADERS_TOO_LARGE = "SVC-GW-4031"


class HeadLimits(Protocol):
    """The limits a protocol applies to a request head (`HttpLimits` holds them)."""

    @property
    def max_header_bytes(self) -> int: ...

    @property
    def header_timeout(self) -> float: ...


def head_size(target: bytes, headers: Iterable[tuple[bytes, bytes]]) -> int:
    """The size of a request head as the cap counts it: target plus ``name: value\\r\\n`` lines."""
    pairs = headers if isinstance(headers, list | tuple) else list(headers)
    # map() sums the lengths in C: a generator cost every request a Python step per header.
    return len(target) + 4 * len(pairs) + sum(map(len, itertools.chain.from_iterable(pairs)))


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


class HeadGuard(asyncio.Protocol):
    """What both protocols share: the deadline timer and the 431 answer.

    First in each protocol's bases, so ``super()`` here is uvicorn's protocol.

    The deadline needs no timer of its own per request: the head's clock is the time it
    started (`_head_since`), and one timer per connection, armed when a clock starts
    with none armed, checks it when it fires: nothing pending, it ends; a later head
    still pending, it is armed again for that head's deadline; else the connection is
    closed. A kept-alive connection's requests set and clear a number, where a timer
    each cost a heap push, a cancel and the heap's comparisons in Python (about 3% of a
    card charge).
    """

    transport: asyncio.Transport
    loop: asyncio.AbstractEventLoop
    server_state: ServerState
    limits: HeadLimits
    _head_timer: asyncio.TimerHandle | None
    _head_since: float | None
    _refused: bool

    def _init_guard(self, limits: HeadLimits) -> None:
        self.limits = limits
        self._head_timer = None
        self._head_since = None
        self._refused = False

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._start_head_clock()

    def connection_lost(self, exc: Exception | None) -> None:
        self._cancel_head_clock()
        super().connection_lost(exc)

    def _start_head_clock(self) -> None:
        """A head's clock starts now, unless one is running."""
        if self._head_since is not None or self.limits.header_timeout <= 0:
            return
        self._head_since = self.loop.time()
        if self._head_timer is None:
            deadline = self._head_since + self.limits.header_timeout
            self._head_timer = self.loop.call_at(deadline, self._head_late)

    def _stop_head_clock(self) -> None:
        """The head is complete; an armed timer finds nothing pending when it fires."""
        self._head_since = None

    def _cancel_head_clock(self) -> None:
        self._head_since = None
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None

    def _head_late(self) -> None:
        self._head_timer = None
        since = self._head_since
        if since is None:
            return
        deadline = since + self.limits.header_timeout
        if self.loop.time() < deadline:  # a head that started after the timer was armed
            self._head_timer = self.loop.call_at(deadline, self._head_late)
            return
        if not self.transport.is_closing():
            logger.info("closed a connection whose request head was not complete in time")
            self.transport.close()

    def _refuse_head(self) -> None:
        """Answer 431 and close; nothing more is read from this connection."""
        self._cancel_head_clock()
        if self._refused or self.transport.is_closing():
            return
        self._refused = True
        self.transport.write(
            _refusal(self.limits.max_header_bytes, self.server_state.default_headers)
        )
        self.transport.close()
