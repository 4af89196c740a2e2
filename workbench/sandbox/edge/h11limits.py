"""uvicorn's h11 protocol with the sandbox's connection limits (`edge.httplimits`).

Its own module so that h11 loads only when it serves: httptools does when installed.
"""

from __future__ import annotations

from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

from workbench.sandbox.edge.headguard import HeadGuard, HeadLimits, head_size

__all__ = ["H11Limited"]


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


class H11Limited(HeadGuard, H11Protocol):
    """h11 with its own incomplete-head cap answered as 431, the complete-head cap, the
    head's and the body's deadlines, the connection cap."""

    def __init__(self, *args: Any, limits: HeadLimits, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._init_guard(limits)
        self.conn = _LimitedConnection(limits.max_header_bytes)

    def data_received(self, data: bytes) -> None:
        if self._refused:
            return
        super().data_received(data)
        state = self.conn.their_state
        if state is h11.IDLE and self.conn.trailing_data[0]:
            self._start_head_clock()  # part of a head is waiting for the rest
        elif state is not h11.IDLE:
            self._stop_head_clock()
        if state is h11.SEND_BODY:  # the head is in, the body is still to come
            self._start_body_clock()
            self._body_received += len(data)
        else:
            self._stop_body_clock()

    def send_400_response(self, msg: str) -> None:
        conn = self.conn
        if isinstance(conn, _LimitedConnection) and conn.head_too_large:
            self._refuse_head()
            return
        super().send_400_response(msg)
