"""`HeadWithBody`: a response's head goes out with its body's first bytes, in one write.

uvicorn writes a response's status line and headers when the app sends
``http.response.start``, and its body when the app sends ``http.response.body``: two
system calls, two TCP segments and two wake-ups of the client for an answer that is
complete a moment later. The transport a request's cycle writes to is wrapped
(`HeadWithBody`), and holds the head until the body's first bytes come, then writes
both at once; every later write goes straight through.

Nothing waits that would not have waited anyway: the client cannot use a head without
its body. What is written before the response starts (``100 Continue``) goes at once, a
HEAD request's head (no body follows) is not held, and a head still held when the cycle
closes the connection (the app failed after starting its answer) is written first.
"""

from __future__ import annotations

import asyncio
from typing import Protocol

__all__ = ["HeadWithBody"]


class _Cycle(Protocol):
    """What `HeadWithBody` reads of uvicorn's ``RequestResponseCycle``."""

    response_started: bool


class HeadWithBody:
    """The transport as one request's response cycle sees it (see the module doc).

    Args:
        cycle: the request's cycle, which says when its response has started.
        transport: the connection's transport.
        method: the request's method (a ``HEAD`` answer's head is never held).
    """

    __slots__ = ("_cycle", "_head", "_transport", "_waiting")

    def __init__(self, cycle: _Cycle, transport: asyncio.Transport, method: str) -> None:
        self._cycle = cycle
        self._transport = transport
        self._head: bytes | None = None
        #: Whether the next write after the response started is the head, to be held.
        self._waiting = method != "HEAD"

    def write(self, data: bytes) -> None:
        """Hold the response's head, send it with the next write; send anything else."""
        if self._head is not None:
            data, self._head = self._head + data, None
        elif self._waiting and self._cycle.response_started:
            self._waiting = False
            self._head = data
            return
        self._transport.write(data)

    def close(self) -> None:
        """Write a head still held, then close the connection."""
        if self._head is not None:
            self._transport.write(self._head)
            self._head = None
        self._transport.close()

    def is_closing(self) -> bool:
        """Whether the connection is closing or closed."""
        return self._transport.is_closing()
