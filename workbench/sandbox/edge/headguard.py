"""What the sandbox's two HTTP protocols share: the request's deadlines, the connection cap.

`workbench.sandbox.edge.httplimits` says why the sandbox subclasses uvicorn's protocols;
the httptools one is there, the h11 one in `workbench.sandbox.edge.h11limits`, which loads
only when h11 serves (``--http h11``, or httptools missing). Each connection is held to:

- the head's deadline, answered 431 when too large (`HeadGuard`);
- the body's: a body still arriving ``body_timeout`` seconds after its head was
  complete, or arriving slower than ``min_body_rate`` bytes a second on average once
  `BODY_RATE_GRACE` seconds have passed, has its connection closed (a client that
  sends a head and then a body byte now and then held a connection, and a task, for
  ever); the request's handler sees the client gone and does nothing;
- a cap on the connections one address holds open at once in this process: one more is
  answered 429 SVC-GW-1004 in the envelope and closed at once.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import uuid
from collections import Counter
from collections.abc import Iterable
from typing import Protocol

from uvicorn.server import ServerState

from workbench.sandbox.errors import envelope_bytes
from workbench.spec import ERRORS

__all__ = [
    "BODY_CHECK_INTERVAL",
    "BODY_RATE_GRACE",
    "HEADERS_TOO_LARGE",
    "HeadGuard",
    "HeadLimits",
    "head_size",
]

logger = logging.getLogger("workbench.sandbox")

#: The envelope code of a request whose head is too large.
HEADERS_TOO_LARGE = "SVC-GW-4031"
#: The envelope code of a connection past its address's cap.
TOO_MANY_CONNECTIONS = "SVC-GW-1004"
#: Seconds of a body before its average rate is held to ``min_body_rate``.
BODY_RATE_GRACE = 2.0
#: Seconds between two looks at a body still arriving.
BODY_CHECK_INTERVAL = 1.0


class HeadLimits(Protocol):
    """The limits a protocol applies to a connection (`HttpLimits` holds them)."""

    @property
    def max_header_bytes(self) -> int: ...

    @property
    def header_timeout(self) -> float: ...

    @property
    def body_timeout(self) -> float: ...

    @property
    def min_body_rate(self) -> int: ...

    @property
    def max_connections_per_address(self) -> int: ...

    @property
    def open_connections(self) -> Counter[str]:
        """The connections each address holds open now, in this process."""
        ...


def head_size(target: bytes, headers: Iterable[tuple[bytes, bytes]]) -> int:
    """The size of a request head as the cap counts it: target plus ``name: value\\r\\n`` lines."""
    pairs = headers if isinstance(headers, list | tuple) else list(headers)
    # map() sums the lengths in C: a generator cost every request a Python step per header.
    return len(target) + 4 * len(pairs) + sum(map(len, itertools.chain.from_iterable(pairs)))


def _refusal(
    code: str,
    reason: bytes,
    message: str,
    default_headers: Iterable[tuple[bytes, bytes]],
    extra: bytes = b"",
) -> bytes:
    """A raw answer in the envelope: a fresh request id, ``Connection: close``."""
    request_id = str(uuid.uuid4())
    body = envelope_bytes(code, message, request_id)
    status = ERRORS[code].http_status
    lines = [b"HTTP/1.1 %d %s\r\n" % (status, reason)]
    lines += [name + b": " + value + b"\r\n" for name, value in default_headers]
    lines += [
        b"content-type: application/json\r\n",
        b"content-length: %d\r\n" % len(body),
        b"x-request-id: " + request_id.encode("ascii") + b"\r\n",
        extra,
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

    _body_timer: asyncio.TimerHandle | None
    _body_since: float | None
    _body_received: int
    _address: str | None

    def _init_guard(self, limits: HeadLimits) -> None:
        self.limits = limits
        self._head_timer = None
        self._head_since = None
        self._refused = False
        self._body_timer = None
        self._body_since = None
        self._body_received = 0
        self._address = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        peer = transport.get_extra_info("peername")
        address = str(peer[0]) if isinstance(peer, tuple) and peer else "unknown"
        cap, counts = self.limits.max_connections_per_address, self.limits.open_connections
        if cap > 0 and counts[address] >= cap:
            self._refused = True
            message = f"too many open connections from this address (at most {cap})"
            reason = b"Too Many Requests"
            extra = b"retry-after: 1\r\n"
            headers = self.server_state.default_headers
            transport.write(_refusal(TOO_MANY_CONNECTIONS, reason, message, headers, extra))
            transport.close()
            return
        counts[address] += 1
        self._address = address
        self._start_head_clock()

    def connection_lost(self, exc: Exception | None) -> None:
        self._cancel_head_clock()
        self._stop_body_clock()
        if self._body_timer is not None:
            self._body_timer.cancel()
            self._body_timer = None
        if self._address is not None:
            counts = self.limits.open_connections
            counts[self._address] -= 1
            if counts[self._address] <= 0:
                del counts[self._address]
            self._address = None
        super().connection_lost(exc)

    def _start_body_clock(self) -> None:
        """A body is still to come after a complete head: its clock starts now."""
        if self._body_since is not None or self.limits.body_timeout <= 0:
            return
        self._body_since = self.loop.time()
        self._body_received = 0
        if self._body_timer is None:
            first = min(BODY_RATE_GRACE, self.limits.body_timeout)
            self._body_timer = self.loop.call_at(self._body_since + first, self._body_late)

    def _stop_body_clock(self) -> None:
        """The body is complete (or the connection gone); an armed timer finds nothing."""
        self._body_since = None

    def _body_late(self) -> None:
        self._body_timer = None
        since = self._body_since
        if since is None:
            return
        now = self.loop.time()
        elapsed = now - since
        rate = self.limits.min_body_rate
        too_slow = elapsed >= BODY_RATE_GRACE and self._body_received < rate * elapsed
        if elapsed >= self.limits.body_timeout or too_slow:
            if not self.transport.is_closing():
                logger.info("closed a connection whose request body was too slow")
                self.transport.close()
            return
        deadline = min(now + BODY_CHECK_INTERVAL, since + self.limits.body_timeout)
        self._body_timer = self.loop.call_at(deadline, self._body_late)

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
        limit = self.limits.max_header_bytes
        message = f"request line and headers exceed {limit} bytes"
        reason = b"Request Header Fields Too Large"
        headers = self.server_state.default_headers
        self.transport.write(_refusal(HEADERS_TOO_LARGE, reason, message, headers))
        self.transport.close()
