"""`Database.atransact`: transactions asked for together share their round trips on
PostgreSQL (`LoopBatches`, `statements.together`), and each ends as it would alone.

The transactions are asked for in one turn of the event loop (``asyncio.gather``), so
they form one batch whatever the machine's speed; the same work runs on SQLite, where
nothing is batched, and must come to the same answers.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from tests.sandbox.pgtrace import Trace
from tests.sandbox.storage.probes import probe_database
from workbench.sandbox.storage import Database, statements

_META = sa.MetaData()
_T = sa.Table(
    "batch_probe",
    _META,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("name", sa.String(40), nullable=False, unique=True),
    sa.Column("hits", sa.Integer, nullable=False, default=0),
)
_INSERT = sa.insert(_T)
_LOCK = sa.select(_T).where(_T.c.name == sa.bindparam("f_name")).with_for_update()
_HIT = sa.update(_T).where(_T.c.name == sa.bindparam("f_name")).values(hits=_T.c.hits + 1)
_NAMES = sa.select(_T.c.name, _T.c.hits).order_by(_T.c.name)


@pytest.fixture(params=["sqlite", "postgres"])
def db(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Database]:
    with probe_database(request.param, tmp_path, _META) as database:
        yield database


def _make(name: str) -> Callable[[sa.Connection], str]:
    """Create ``name`` unless it exists (then count a hit): the shape of an idempotent write."""

    def work(conn: sa.Connection) -> str:
        if statements.fetch_one(conn, _LOCK, {"f_name": name}) is not None:
            statements.execute(conn, _HIT, {"f_name": name})
            return f"{name}: found"
        statements.defer(conn, _INSERT, {"name": name})
        return f"{name}: made"

    return work


async def _ask(db: Database, work: Callable[[sa.Connection], Any], name: str) -> Any:
    with statements.reading_ahead((_LOCK, {"f_name": name})):
        return await db.atransact(work)


def _together(db: Database, *asks: tuple[Callable[[sa.Connection], Any], str]) -> list[Any]:
    async def main() -> list[Any]:
        return await asyncio.gather(
            *(_ask(db, work, name) for work, name in asks), return_exceptions=True
        )

    return asyncio.run(main())


def _rows(db: Database) -> list[tuple[str, int]]:
    with db.read() as conn:
        return [tuple(row) for row in conn.execute(_NAMES)]  # type: ignore[misc]


def test_transactions_asked_for_together_all_commit(db: Database) -> None:
    names = [f"n{i}" for i in range(12)]
    answers = _together(db, *((_make(name), name) for name in names))
    assert answers == [f"{name}: made" for name in names]
    assert _rows(db) == sorted((name, 0) for name in names)


@pytest.mark.parametrize("db", ["postgres"], indirect=True)  # SQLite has no round trips
def test_on_postgres_they_share_two_round_trips(db: Database, tmp_path: Path) -> None:
    _together(db, (_make("warm"), "warm"))  # the pool's connection exists, and is not idle
    trace = Trace(db.engine, tmp_path / "libpq.trace")
    _together(db, *((_make(f"n{i}"), f"n{i}") for i in range(10)))
    # One statement reads for all ten, one makes all ten rows; then the answers.
    assert trace.round_trips() == 2
    assert len(_rows(db)) == 11


def test_two_making_the_same_row_in_one_batch_each_run_alone(db: Database) -> None:
    answers = _together(
        db, (_make("same"), "same"), (_make("other"), "other"), (_make("same"), "same")
    )
    # Their shared INSERT broke the unique index: nothing of it was kept, and each ran
    # again on its own, so one made the row and the other found it.
    assert sorted(answers) == ["other: made", "same: found", "same: made"]
    assert _rows(db) == [("other", 0), ("same", 1)]


def test_one_needing_locks_runs_alone_and_the_rest_share_the_batch(db: Database) -> None:
    _together(db, (_make("old"), "old"))
    answers = _together(db, (_make("new"), "new"), (_make("old"), "old"), (_make("new2"), "new2"))
    assert answers == ["new: made", "old: found", "new2: made"]
    assert _rows(db) == [("new", 0), ("new2", 0), ("old", 1)]


def test_a_refusal_is_its_callers_alone_and_writes_nothing(db: Database) -> None:
    def refuse(conn: sa.Connection) -> str:
        statements.fetch_one(conn, _LOCK, {"f_name": "refused"})
        statements.defer(conn, _INSERT, {"name": "refused"})
        raise LookupError("refused after queueing its INSERT")

    answers = _together(db, (_make("a"), "a"), (refuse, "refused"), (_make("b"), "b"))
    assert answers[::2] == ["a: made", "b: made"]
    assert isinstance(answers[1], LookupError)
    assert _rows(db) == [("a", 0), ("b", 0)]


def test_a_read_nobody_announced_runs_that_transaction_alone(db: Database) -> None:
    def unannounced(conn: sa.Connection) -> str:
        row = statements.fetch_one(conn, _LOCK, {"f_name": "elsewhere"})  # not the one announced
        statements.defer(conn, _INSERT, {"name": "unannounced"})
        return f"read {row}"

    answers = _together(db, (_make("a"), "a"), (unannounced, "x"))
    assert answers == ["a: made", "read None"]
    assert _rows(db) == [("a", 0), ("unannounced", 0)]


def test_one_announcing_nothing_runs_alone_beside_the_batch(db: Database) -> None:
    async def main() -> list[Any]:
        return await asyncio.gather(
            _ask(db, _make("a"), "a"),
            db.atransact(_make("plain")),  # no reads announced: a transaction of its own
            _ask(db, _make("b"), "b"),
        )

    assert asyncio.run(main()) == ["a: made", "plain: made", "b: made"]
    assert _rows(db) == [("a", 0), ("b", 0), ("plain", 0)]
