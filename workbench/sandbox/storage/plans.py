"""`ReadPlan`: the reads a write transaction will make, declared once, announced and run.

On PostgreSQL a transaction's reads each cost a round trip; announced before the
transaction starts, they travel with its ``BEGIN`` (or, unlocked, as one statement, and
for a batch of transactions as one statement for all: see `statements`). A feature
declares such reads on a plan (`ReadPlan.read`, a statement and its parameters), hands
the plan to `Database.atransact` or `Database.transact`, which announces them, and runs
each inside the transaction through the `PlannedRead` it was given: what runs is what
was announced, by construction. A planned read run before one declared ahead of it
that already ran, or run twice, raises `ReadOutOfPlan` on every backend, so a
transaction whose steps were reordered fails its tests instead of silently reading
each row again. A read may be skipped (an answer found early); the ones after it still
run in order.

A plan nobody announced runs its reads all the same (a charge made inside another
transaction, say): it only gains nothing.

On SQLite each read runs when it is run; the order is still checked.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any, TypeVar

import sqlalchemy as sa

from workbench.sandbox.storage import statements
from workbench.sandbox.storage.types import AnyRow

__all__ = ["PlannedRead", "ReadOutOfPlan", "ReadPlan"]

T = TypeVar("T")


class ReadOutOfPlan(RuntimeError):
    """A planned read ran after a read declared later than it, or ran twice."""


class PlannedRead:
    """One read of a `ReadPlan`: a SELECT and its parameters, run with `first`."""

    __slots__ = ("_index", "_plan", "params", "statement")

    def __init__(
        self, plan: ReadPlan, index: int, statement: sa.Select[Any], params: Mapping[str, Any]
    ) -> None:
        self._plan = plan
        self._index = index
        self.statement = statement
        self.params = params

    def first(self, conn: sa.Connection) -> AnyRow | None:
        """The read's first row (its only one, for the reads a plan makes), or ``None``.

        Answered from the rows read ahead when the plan was announced (PostgreSQL),
        run now otherwise.

        Raises:
            ReadOutOfPlan: a read declared after this one already ran in this attempt.
        """
        self._plan._ran(self)
        row: AnyRow | None = statements.fetch_one(conn, self.statement, self.params)
        return row

    def __repr__(self) -> str:
        return f"<PlannedRead {self._index} of {len(self._plan)}>"


class ReadPlan:
    """The reads a write transaction will make, in the order it makes them.

    Declare each with `read` before the transaction, pass the plan to
    `Database.atransact` (or `transact`), and inside the transaction run each through
    the `PlannedRead` that `read` returned.
    """

    __slots__ = ("_last", "_reads")

    def __init__(self) -> None:
        self._reads: list[PlannedRead] = []
        self._last = -1

    def read(self, statement: sa.Select[Any], params: Mapping[str, Any]) -> PlannedRead:
        """Declare the next read: ``statement`` with ``params``; the handle that runs it."""
        planned = PlannedRead(self, len(self._reads), statement, params)
        self._reads.append(planned)
        return planned

    def __len__(self) -> int:
        return len(self._reads)

    def _ran(self, read: PlannedRead) -> None:
        if read._plan is not self:
            raise ReadOutOfPlan(f"{read!r} belongs to another plan")
        if read._index <= self._last:
            raise ReadOutOfPlan(
                f"read {read._index} of the plan ran after read {self._last}: run the reads "
                "in the order they were declared, each once"
            )
        self._last = read._index

    @contextmanager
    def announced(self) -> Iterator[None]:
        """Announce the plan's reads to the write transactions started within (and to the
        threads they run on): on PostgreSQL they go to the server with the first statement."""
        with statements.reading_ahead(*((r.statement, r.params) for r in self._reads)):
            yield

    def bind(self, work: Callable[[sa.Connection], T]) -> Callable[[sa.Connection], T]:
        """``work`` for a transaction that may be attempted more than once: each attempt
        runs the plan's reads from the start."""

        def attempt(conn: sa.Connection) -> T:
            self._last = -1
            return work(conn)

        return attempt
