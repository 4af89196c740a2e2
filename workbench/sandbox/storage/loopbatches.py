"""`LoopBatches`: an event loop's PostgreSQL write transactions, sent to the server together.

A charge on PostgreSQL is two round trips (`statements`: its reads, then its INSERTs), and
handing it to a thread and back costs about as much Python as the charge itself. So the
transactions an event loop asks for while its threads are busy wait, and go to a
thread together: `statements.together` reads for all of them in one statement and writes
all their INSERTs in another, committed together. Only then are their callers answered,
so nothing is acknowledged before it is durable. A transaction that needs locks, or
whose batch lost an insert race, runs again on its own, as `Database.transact` runs
it (unlocked if it can, locked otherwise).

SQLite's counterpart is `workbench.sandbox.storage.loopwrites.LoopWrites`.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
from collections.abc import Callable
from concurrent.futures import Executor
from typing import Any, TypeVar

import sqlalchemy as sa

from workbench.sandbox.storage import statements
from workbench.sandbox.storage.answers import settle

__all__ = ["LoopBatches"]

T = TypeVar("T")
#: A transaction waiting for its batch: its work, its context, its caller's future.
_Waiting = tuple[statements.Work, contextvars.Context, "asyncio.Future[Any]"]
#: Transactions in one batch at most (the statements' parameters grow with it).
_MOST = 16


class LoopBatches:
    """The write transactions one event loop has asked for and not yet sent.

    Args:
        engine: the PostgreSQL engine.
        transact: runs one transaction on its own (`Database.transact`).
        executor: the threads the batches run on.
        in_flight: batches on their way at once; more wait and grow meanwhile.
        loop: the loop whose transactions these are.
    """

    def __init__(
        self,
        engine: sa.Engine,
        transact: Callable[[statements.Work], Any],
        executor: Executor,
        in_flight: int,
        loop: asyncio.AbstractEventLoop,
    ) -> None:
        self.loop = loop
        self._engine = engine
        self._transact = transact
        self._executor = executor
        self._room = in_flight
        self._waiting: list[_Waiting] = []

    async def run(self, work: Callable[[sa.Connection], T]) -> T:
        """Run ``work`` in a write transaction, in the next batch; its result."""
        future: asyncio.Future[T] = self.loop.create_future()
        self._waiting.append((work, contextvars.copy_context(), future))
        if len(self._waiting) == 1:
            self.loop.call_soon(self._send)
        return await future

    def _send(self) -> None:
        while self._waiting and self._room > 0:
            batch, self._waiting = self._waiting[:_MOST], self._waiting[_MOST:]
            self._room -= 1
            sent = self.loop.run_in_executor(self._executor, self._run, batch)
            sent.add_done_callback(functools.partial(self._answer, batch))

    def _run(self, batch: list[_Waiting]) -> list[tuple[Any, BaseException | None]]:
        """In a thread: the batch's transactions, and what each came to."""
        with self._engine.connect() as conn:
            outcomes = statements.together(conn, [(work, context) for work, context, _ in batch])
        return [
            self._alone(waiting) if outcome.alone else (outcome.result, outcome.error)
            for waiting, outcome in zip(batch, outcomes, strict=True)
        ]

    def _alone(self, waiting: _Waiting) -> tuple[Any, BaseException | None]:
        work, context, _ = waiting
        try:
            return context.run(self._transact, work), None
        except Exception as exc:
            return None, exc

    def _answer(self, batch: list[_Waiting], done: asyncio.Future[Any]) -> None:
        self._room += 1
        error = done.exception() if not done.cancelled() else asyncio.CancelledError()
        answers = done.result() if error is None else [(None, error)] * len(batch)
        settle(
            (future, result, exc)
            for (_, _, future), (result, exc) in zip(batch, answers, strict=True)
        )
        self._send()
