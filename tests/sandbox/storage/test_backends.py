"""The two `Backend`s behind `Database`: the same operations give the same results.

Each test runs on SQLite and on PostgreSQL (skipped, saying why, where no server
answers) through the `Backend` interface or the `Database` that hands it every call,
and asserts the outcome the services rely on, whichever backend serves them: what a
committed or a failed write leaves, a lost insert race run again, transactions asked
for together from async code, reads in their plan's order, the schema transaction.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa

from tests.postgres import database_url
from tests.sandbox.storage.probes import probe_database
from workbench.sandbox.storage import Database, ReadPlan, statements
from workbench.sandbox.storage.backends import Backend
from workbench.sandbox.storage.database import open_backend
from workbench.sandbox.storage.postgres import PostgresBackend
from workbench.sandbox.storage.sqlite import SQLiteBackend

_META = sa.MetaData()
_T = sa.Table(
    "backend_probe",
    _META,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("name", sa.String(40), nullable=False, unique=True),
    sa.Column("amount", sa.BigInteger, nullable=False),
)
_BY_NAME = sa.select(_T.c.name, _T.c.amount).where(_T.c.name == sa.bindparam("f_name"))
_LOCK = _BY_NAME.with_for_update()
_ALL = sa.select(_T.c.name, _T.c.amount).order_by(_T.c.name)
_INSERT = sa.insert(_T)


@pytest.fixture(params=["sqlite", "postgres"])
def db(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Database]:
    with probe_database(request.param, tmp_path, _META) as database:
        yield database


def _rows(db: Database) -> list[tuple[str, int]]:
    with db.read() as conn:
        return [(row.name, row.amount) for row in conn.execute(_ALL)]


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_the_url_chooses_the_backend(backend: str, tmp_path: Path) -> None:
    with database_url(backend, tmp_path) as url:
        db = Database(url)
        try:
            expected = SQLiteBackend if backend == "sqlite" else PostgresBackend
            assert type(db.backend) is expected
            assert isinstance(db.backend, Backend)
            assert db.engine is db.backend.engine
            assert db.is_sqlite is (backend == "sqlite")
            # Files beside the database only where every process is on this machine.
            assert db.is_local is (backend == "sqlite")
            sidecar = db.sidecar("write.lock")
            if backend == "sqlite":
                assert sidecar == f"{tmp_path / 'sandbox.db'}-write.lock"
            else:
                assert sidecar is None
        finally:
            db.dispose()


def test_an_in_memory_database_is_sqlite_without_files() -> None:
    backend = open_backend("sqlite://")
    try:
        assert type(backend) is SQLiteBackend
        assert backend.is_memory
        assert backend.is_local
        assert backend.sidecar("write.lock") is None
    finally:
        backend.dispose()


def test_a_write_commits_on_success_and_leaves_nothing_on_failure(db: Database) -> None:
    with db.write() as conn:
        statements.execute(conn, _INSERT, {"name": "kept", "amount": 15000})
        statements.defer(conn, _INSERT, {"name": "kept too", "amount": 1})

    def refused() -> None:
        with db.write() as conn:
            statements.execute(conn, _INSERT, {"name": "undone", "amount": 2})
            statements.defer(conn, _INSERT, {"name": "undone too", "amount": 3})
            raise LookupError("refused")

    def duplicate() -> None:
        with db.write() as conn:
            statements.execute(conn, _INSERT, {"name": "half", "amount": 4})
            statements.defer(conn, _INSERT, {"name": "kept", "amount": 5})  # a duplicate

    with pytest.raises(LookupError, match="refused"):
        refused()
    with pytest.raises(sa.exc.IntegrityError):
        duplicate()

    assert _rows(db) == [("kept", 15000), ("kept too", 1)]


def test_transact_runs_the_work_again_when_a_concurrent_insert_wins(db: Database) -> None:
    # Another request made the row after this one's first attempt looked (on SQLite,
    # another process between two of its transactions): the attempt's INSERT breaks
    # the unique index, and the next attempt finds the row.
    with db.write() as conn:
        statements.execute(conn, _INSERT, {"name": "raced", "amount": 99})
    attempts: list[int] = []

    def work(conn: sa.Connection) -> str:
        attempts.append(len(attempts) + 1)
        looked = len(attempts) > 1  # the first attempt's read came before the other's row
        if looked and statements.fetch_one(conn, _LOCK, {"f_name": "raced"}) is not None:
            return "found"
        statements.execute(conn, _INSERT, {"name": "raced", "amount": 7})
        return "made"

    assert db.transact(work) == "found"
    assert attempts == [1, 2]
    assert _rows(db) == [("raced", 99)]


def test_transact_gives_up_after_its_attempts(db: Database) -> None:
    with db.write() as conn:
        statements.execute(conn, _INSERT, {"name": "there", "amount": 1})
    calls: list[int] = []

    def work(conn: sa.Connection) -> None:
        calls.append(1)
        statements.execute(conn, _INSERT, {"name": "there", "amount": 2})

    with pytest.raises(sa.exc.IntegrityError):
        db.transact(work, attempts=3)
    assert len(calls) == 3
    assert _rows(db) == [("there", 1)]


def _make(name: str, amount: int) -> tuple[ReadPlan, Callable[[sa.Connection], str]]:
    """An idempotent write of ``name``: made once, found afterwards (its read planned)."""
    plan = ReadPlan()
    existing = plan.read(_LOCK, {"f_name": name})

    def work(conn: sa.Connection) -> str:
        if existing.first(conn) is not None:
            return f"{name}: found"
        statements.defer(conn, _INSERT, {"name": name, "amount": amount})
        return f"{name}: made"

    return plan, work


def test_transactions_asked_for_together_come_to_what_they_would_alone(db: Database) -> None:
    async def main() -> list[str]:
        asks = [_make("a", 1), _make("b", 2), _make("a", 3), _make("c", 4)]
        return await asyncio.gather(*(db.atransact(work, plan=plan) for plan, work in asks))

    # PostgreSQL sends the four as one batch, whose INSERTs fail together on the second
    # "a"; each then runs on its own, in order. SQLite runs them in order in one group.
    assert asyncio.run(main()) == ["a: made", "b: made", "a: found", "c: made"]
    assert _rows(db) == [("a", 1), ("b", 2), ("c", 4)]


def test_a_transaction_with_a_plan_finds_what_an_earlier_one_made(db: Database) -> None:
    plan, work = _make("once", 10)
    assert db.transact(work, plan=plan) == "once: made"
    plan, work = _make("once", 20)
    assert db.transact(work, plan=plan) == "once: found"

    async def again() -> str:
        plan, work = _make("once", 30)
        return await db.atransact(work, plan=plan)

    assert asyncio.run(again()) == "once: found"
    assert _rows(db) == [("once", 10)]


def test_async_reads_and_runs_see_the_committed_rows(db: Database) -> None:
    def insert() -> None:
        with db.write() as conn:
            statements.execute(conn, _INSERT, {"name": "seen", "amount": 5})

    async def main() -> tuple[list[tuple[str, int]], list[tuple[str, int]]]:
        await db.run(insert)
        read = await db.aread(lambda conn: [tuple(r) for r in conn.execute(_ALL)])
        threaded = await db.in_thread(lambda: _rows(db))
        return read, threaded

    read, threaded = asyncio.run(main())
    assert read == threaded == [("seen", 5)]


def test_the_schema_transaction_commits_or_rolls_back(db: Database) -> None:
    with db.backend.schema_transaction() as conn:
        conn.execute(_INSERT, {"name": "schema", "amount": 1})

    def failing() -> None:
        with db.backend.schema_transaction() as conn:
            conn.execute(_INSERT, {"name": "not kept", "amount": 2})
            raise LookupError("failed")

    with pytest.raises(LookupError, match="failed"):
        failing()
    assert _rows(db) == [("schema", 1)]
