"""`ReadPlan` and `insert_later`: what a plan announces is what it runs, in its order, and
a deferred insert hands back a row read alike, on both backends."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa

from tests.sandbox.storage.probes import probe_database
from workbench.sandbox.storage import (
    Database,
    ReadOutOfPlan,
    ReadPlan,
    insert_later,
    row_like,
    statements,
)

_META = sa.MetaData()
_T = sa.Table(
    "plan_probe",
    _META,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("name", sa.String(40), nullable=False, unique=True),
    sa.Column("flag", sa.Boolean, nullable=False, default=False),
    sa.Column("note", sa.String(40)),
)
_INSERT = sa.insert(_T)
_BY_NAME = sa.select(_T).where(_T.c.name == sa.bindparam("f_name"))


@pytest.fixture(params=["sqlite", "postgres"])
def db(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Database]:
    with probe_database(request.param, tmp_path, _META) as database:
        with database.write() as conn:
            conn.execute(_INSERT, [{"name": "a"}, {"name": "b"}])
        yield database


def test_planned_reads_run_in_order_and_may_be_skipped(db: Database) -> None:
    plan = ReadPlan()
    first = plan.read(_BY_NAME, {"f_name": "a"})
    plan.read(_BY_NAME, {"f_name": "zz"})  # skipped: an answer found early, say
    third = plan.read(_BY_NAME, {"f_name": "b"})

    def work(conn: sa.Connection) -> tuple[str, str]:
        a, b = first.first(conn), third.first(conn)
        assert a is not None
        assert b is not None
        return a.name, b.name

    assert db.transact(work, plan=plan) == ("a", "b")


@pytest.mark.parametrize("order", [(1, 0), (0, 0), (1, 1)], ids=["reordered", "twice", "again"])
def test_a_read_run_out_of_its_planned_order_is_refused(
    db: Database, order: tuple[int, int]
) -> None:
    # A transaction whose reads drifted from the plan fails, on SQLite too, and writes nothing.
    plan = ReadPlan()
    reads = [plan.read(_BY_NAME, {"f_name": "a"}), plan.read(_BY_NAME, {"f_name": "b"})]

    def work(conn: sa.Connection) -> None:
        insert_later(conn, _INSERT, {"name": "c"})
        for index in order:
            reads[index].first(conn)

    with pytest.raises(ReadOutOfPlan, match="in the order they were declared"):
        db.transact(work, plan=plan)
    with db.read() as conn:
        assert conn.execute(_BY_NAME, {"f_name": "c"}).first() is None


def test_a_read_of_another_plan_is_refused(db: Database) -> None:
    plan, other = ReadPlan(), ReadPlan()
    plan.read(_BY_NAME, {"f_name": "a"})
    stray = other.read(_BY_NAME, {"f_name": "a"})
    with pytest.raises(ReadOutOfPlan, match="another plan"):
        db.transact(lambda conn: plan._ran(stray), plan=plan)


def test_each_attempt_runs_the_plan_from_its_start(db: Database) -> None:
    # A second attempt (a lost insert race; on PostgreSQL also the unlocked try giving
    # way to a locked one) runs the work again: its reads start over, not out of order.
    plan = ReadPlan()
    read = plan.read(_BY_NAME, {"f_name": "a"})
    attempts: list[int] = []

    def work(conn: sa.Connection) -> str:
        row = read.first(conn)
        assert row is not None
        attempts.append(1)
        if len(attempts) == 1:
            insert_later(conn, _INSERT, {"name": "b"})  # a duplicate: IntegrityError
            conn.execute(sa.select(sa.literal(1)))  # PostgreSQL: raised here, not at COMMIT
        return str(row.name)

    assert db.transact(work, plan=plan) == "a"
    assert len(attempts) == 2


def test_a_plan_announces_its_reads_and_answers_them_from_the_first_trip(db: Database) -> None:
    plan = ReadPlan()
    a = plan.read(_BY_NAME, {"f_name": "a"})
    missing = plan.read(_BY_NAME, {"f_name": "zz"})
    sent: list[int] = []

    def work(conn: sa.Connection) -> str:
        found, none = a.first(conn), missing.first(conn)
        assert found is not None
        assert none is None
        transaction = statements.transaction_of(conn)
        if transaction is not None:
            sent.append(transaction.sent)
            assert transaction.unlocked  # PostgreSQL: announced, so tried unlocked first
        insert_later(conn, _INSERT, {"name": "c"})
        return str(found.name)

    assert db.transact(work, plan=plan) == "a"
    if not db.is_sqlite:
        assert sent == [1]  # both reads, one statement; nothing more before the INSERT
    with db.read() as conn:
        assert conn.execute(_BY_NAME, {"f_name": "c"}).first() is not None


def test_transactions_with_plans_from_async_code_share_their_reads(db: Database) -> None:
    # PostgreSQL: batched (`LoopBatches`), each answered from the one statement that read
    # for all of them; SQLite: one after the other. Each sees its own rows.
    def charge(name: str) -> tuple[ReadPlan, statements.Work]:
        plan = ReadPlan()
        mine, fresh = (
            plan.read(_BY_NAME, {"f_name": name}),
            plan.read(_BY_NAME, {"f_name": f"{name}2"}),
        )

        def work(conn: sa.Connection) -> str:
            row, none = mine.first(conn), fresh.first(conn)
            assert row is not None
            assert none is None
            insert_later(conn, _INSERT, {"name": f"{name}2"})
            return str(row.name)

        return plan, work

    async def main() -> list[str]:
        runs = [charge(name) for name in ("a", "b")]
        return list(await asyncio.gather(*(db.atransact(w, plan=p) for p, w in runs)))

    assert asyncio.run(main()) == ["a", "b"]
    with db.read() as conn:
        names = conn.execute(sa.select(_T.c.name).order_by(_T.c.name)).scalars().all()
    assert names == ["a", "a2", "b", "b2"]


def test_a_deferred_insert_hands_back_the_row_a_read_would(db: Database) -> None:
    with db.write() as conn:
        made = insert_later(conn, _INSERT, {"name": "c", "note": "n"})
        read = conn.execute(_BY_NAME, {"f_name": "c"}).one()
    assert made.name == read.name == "c"
    assert made.note == read.note == "n"
    assert made.flag is read.flag is False  # the column's default, filled in
    assert made.id is None  # the database's own, not known before it is read
    assert made._fields == read._fields


def test_row_like_takes_the_tables_columns_and_defaults() -> None:
    row = row_like(_T, {"name": "x"})
    assert row._asdict() == {"id": None, "name": "x", "flag": False, "note": None}
