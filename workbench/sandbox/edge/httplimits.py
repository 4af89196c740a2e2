"""HTTP-level limits uvicorn has no setting for: a header-size cap on httptools, a header
deadline, a body deadline and minimum rate, a cap on an address's open connections.

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
after the head's first byte, on a kept-alive connection) is closed. So is one whose
body is still arriving ``body_timeout`` seconds after its head, or slower than
``min_body_rate`` (`workbench.sandbox.edge.headguard`); and an address holding
``max_connections_per_address`` connections open has its next one refused.
"""

from __future__ import annotations

import asyncio
import functools
import importlib.util
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from uvicorn.config import Config
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
from uvicorn.server import ServerState

from workbench.sandbox.edge.headguard import (
    BODY_RATE_GRACE,
    HEADERS_TOO_LARGE,
    HeadGuard,
    head_size,
)
from workbench.sandbox.edge.onewrite import HeadWithBody

__all__ = ["BODY_RATE_GRACE", "HEADERS_TOO_LARGE", "HttpLimits", "head_size"]


class _HeadTooLarge(Exception):
    """Raised inside a parser callback to stop the parser on an oversized head."""


class _HttpToolsLimited(HeadGuard, HttpToolsProtocol):
    """httptools with the head cap (bytes counted as they arrive) and the head deadline;
    each response's head written with its body (`HeadWithBody`).

    Its keep-alive deadline is kept as the head's is (`HeadGuard`): uvicorn arms a timer
    after every response and cancels it with the next request's first bytes; here the
    time the connection went idle (`_idle_since`) is set and cleared, and one timer,
    armed when none is, closes the connection when it finds it idle for
    ``timeout_keep_alive`` seconds, or is armed again for the current idle spell.
    """

    def __init__(self, *args: Any, limits: HttpLimits, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._init_guard(limits)
        self._head_pending = False
        self._head_received = 0
        self._too_large = False
        self._in_body = False
        self._idle_since: float | None = None

    def connection_lost(self, exc: Exception | None) -> None:
        super().connection_lost(exc)
        self._idle_since = None
        if self.timeout_keep_alive_task is not None:
            self.timeout_keep_alive_task.cancel()
            self.timeout_keep_alive_task = None

    def _unset_keepalive_if_required(self) -> None:
        self._idle_since = None  # an armed timer finds the connection busy

    def on_response_complete(self) -> None:
        # uvicorn's own, but for the keep-alive deadline (see the class doc).
        self.server_state.total_requests += 1
        if self.transport.is_closing():
            return
        self._idle_since = None
        self.flow.resume_reading()
        if self.pipeline:
            cycle, app = self.pipeline.pop()
            self._start_asgi_task(cycle, app)
            return
        self._idle_since = now = self.loop.time()
        if self.timeout_keep_alive_task is None:
            deadline = now + self.timeout_keep_alive
            self.timeout_keep_alive_task = self.loop.call_at(deadline, self._keep_alive_late)

    def _keep_alive_late(self) -> None:
        self.timeout_keep_alive_task = None
        since = self._idle_since
        if since is None:
            return
        deadline = since + self.timeout_keep_alive
        if self.loop.time() < deadline:  # idle again since the timer was armed
            self.timeout_keep_alive_task = self.loop.call_at(deadline, self._keep_alive_late)
            return
        self.timeout_keep_alive_handler()

    def data_received(self, data: bytes) -> None:
        if self._refused:
            return
        super().data_received(data)
        if self._head_pending and not self._refused:
            # Every byte of a read after which the head is still incomplete belongs to it.
            self._head_received += len(data)
            if self._head_received > self.limits.max_header_bytes:
                self._refuse_head()
        elif self._in_body:  # a read ended with the body still to come: rarely so
            self._start_body_clock()

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

    def on_body(self, body: bytes) -> None:
        self._body_received += len(body)
        super().on_body(body)

    def on_message_complete(self) -> None:
        self._in_body = False
        self._stop_body_clock()
        super().on_message_complete()

    def on_headers_complete(self) -> None:
        self._head_pending = False
        self._stop_head_clock()
        if head_size(self.url, self.headers) > self.limits.max_header_bytes:
            self._too_large = True
            raise _HeadTooLarge
        previous = self.cycle
        super().on_headers_complete()
        self._in_body = True  # until `on_message_complete`, at once when there is none
        cycle = self.cycle
        if cycle is not None and cycle is not previous:  # a request's cycle (no upgrade)
            cycle.transport = HeadWithBody(  # type: ignore[assignment]
                cycle, self.transport, self.scope["method"]
            )


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
        body_timeout: seconds a body may take once its head is complete (0: no limit).
        min_body_rate: bytes a second a body must average once it has taken
            `BODY_RATE_GRACE` seconds (0: no minimum).
        max_connections_per_address: connections one address may hold open at once in
            this process (0: no cap).
        open_connections: the connections each address holds open now (kept here, as
            each connection's protocol is built from this object).
    """

    max_header_bytes: int = 32 * 1024
    header_timeout: float = 10.0
    implementation: str = "auto"
    body_timeout: float = 10.0
    min_body_rate: int = 1024
    max_connections_per_address: int = 256
    open_connections: Counter[str] = field(
        default_factory=Counter, compare=False, hash=False, repr=False
    )

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
        cls = _protocol_class(self.resolved)
        return cls(
            config=config, server_state=server_state, app_state=app_state, _loop=_loop, limits=self
        )

    def uvicorn_settings(self) -> dict[str, Any]:
        """Keyword arguments for `uvicorn.Config` / `uvicorn.run` that apply these limits."""
        if self.resolved not in ("httptools", "h11"):
            raise ValueError(f"unknown HTTP implementation {self.implementation!r}")
        return {"http": self, "h11_max_incomplete_event_size": self.max_header_bytes}


@functools.cache
def _protocol_class(implementation: str) -> Callable[..., asyncio.Protocol]:
    """The protocol class of ``implementation``: h11's module loads only if it is asked for."""
    if implementation == "httptools":
        return _HttpToolsLimited
    from workbench.sandbox.edge.h11limits import H11Limited

    return H11Limited
