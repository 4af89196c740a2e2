"""`LoopWrites`: an event loop's SQLite writes, run together in one transaction per turn.

Writes asked for during one turn of the loop wait for the start of the next turn,
then run one after another in one `TransactionGroup` (each in its own SAVEPOINT) and
share its commit; only after the commit do the callers get their answers, so nothing
is acknowledged before it is durable. The write lock is held from ``BEGIN`` to
``COMMIT`` only, so another process serving the same file writes while this one parses
and verifies requests.

When the last group had more than one member (concurrent callers), a group waits one
turn more, so that requests read from the network meanwhile join it: under load a
group then holds about twice as many writes, which share what a group costs whatever
its size (its BEGIN and COMMIT, the table and index pages all its writes append to).
A lone caller's write never waits that turn.

When the lock is taken (another process's group, the reconciler thread), the loop does
not wait for it: it watches the lock's wake-up pipe and tries again when a release
writes to it (see `WriteLock`), and every few milliseconds in any case.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any, TypeVar

from workbench.sandbox.storage.answers import Answer, settle
from workbench.sandbox.storage.groups import TransactionGroup
from workbench.sandbox.storage.writelock import WriteLock

__all__ = ["LoopWrites"]

T = TypeVar("T")
#: How long a wait goes without trying the lock even when no wake-up came.
_RETRY_SECONDS = 0.005


class LoopWrites:
    """The writes one event loop has asked for and not yet run.

    Args:
        lock: the SQLite file's write lock.
        begin_group: opens a group once this holds the lock (the group releases it).
        loop: the loop whose writes these are.
    """

    def __init__(
        self,
        lock: WriteLock,
        begin_group: Callable[[], TransactionGroup],
        loop: asyncio.AbstractEventLoop,
    ) -> None:
        self.loop = loop
        self._lock = lock
        self._begin_group = begin_group
        self._pending: list[tuple[Callable[[], Any], asyncio.Future[Any]]] = []
        self._watching = False
        self._retry: asyncio.TimerHandle | None = None
        self._one_more_turn = False
        self._last_size = 0

    async def run(self, work: Callable[[], T]) -> T:
        """Run ``work`` (short, synchronous database work) in the next group; its result."""
        future: asyncio.Future[T] = self.loop.create_future()
        if not self._pending:
            self._one_more_turn = self._last_size > 1
            self.loop.call_soon(self._flush)
        self._pending.append((work, future))
        return await future

    def _flush(self) -> None:
        if self._one_more_turn:
            self._one_more_turn = False
            self.loop.call_soon(self._flush)
            return
        lock = self._lock
        if not self._pending:
            self._stop_waiting()
            return
        if not lock.acquire(blocking=False):
            self._wait()
            return
        self._stop_waiting()
        items, self._pending = self._pending, []
        self._last_size = len(items)
        try:
            group = self._begin_group()
        except BaseException as exc:  # cannot even begin: every caller hears why
            lock.release()
            settle([(future, None, exc) for _, future in items])
            return
        done: list[Answer] = []
        for work, future in items:
            try:
                done.append((future, work(), None))
            except BaseException as exc:  # that member's savepoints are already undone
                done.append((future, None, exc))
        error = group.finish()  # releases the lock
        if error is not None:
            done = [(future, None, exc or error) for future, _, exc in done]
        settle(done)

    def _wait(self) -> None:
        wake = self._lock.wake_fd
        if not self._watching and wake is not None:
            self.loop.add_reader(wake, self._woken)
            self._watching = True
        if self._retry is None:
            self._retry = self.loop.call_later(_RETRY_SECONDS, self._retried)

    def _woken(self) -> None:
        self._lock.drain()
        self._flush()

    def _retried(self) -> None:
        self._retry = None
        self._flush()

    def _stop_waiting(self) -> None:
        if self._watching:
            wake = self._lock.wake_fd
            if wake is not None:
                self.loop.remove_reader(wake)
            self._watching = False
        if self._retry is not None:
            self._retry.cancel()
            self._retry = None
