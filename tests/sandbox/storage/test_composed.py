"""`composed`: PostgreSQL statements made of others as SQLAlchemy constructs, not SQL text.

What the unlocked and batched transactions rely on: each part keeps its own parameters
(renamed, so two reads of one statement with different values never share one), its
``FOR UPDATE``, and its columns in order; the whole uses ``$n`` placeholders. Checked
on the compiled statements, and on a PostgreSQL server by running them.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa
from sqlalchemy.dialects.postgresql import psycopg as psycopg_dialect

from tests.sandbox.storage.probes import probe_database
from workbench.sandbox.storage import Database, ReadPlan, composed, statements

_META = sa.MetaData()
_T = sa.Table(
    "composed_probe",
    _META,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("name", sa.String(40), nullable=False, unique=True),
    sa.Column("amount", sa.BigInteger, nullable=False, default=0),
)
_LOCK = (
    sa.select(_T.c.name, _T.c.amount).where(_T.c.name == sa.bindparam("f_name")).with_for_update()
)
_LITERAL = sa.select(_T.c.amount).where(_T.c.name == "fixed", _T.c.amount > sa.bindparam("f_min"))
_INSERT = sa.insert(_T)


class _Part:
    """A statement as `statements` compiles it on its own."""

    def __init__(self, statement: sa.Select[object] | sa.Insert, keys: list[str] | None = None):
        compiled = statement.compile(dialect=psycopg_dialect.dialect(), column_keys=keys)
        self.statement = statement
        self.bind_names = compiled.bind_names
        self.names = tuple(compiled.binds)


def test_reads_keep_their_own_parameters_their_locks_and_numbered_placeholders() -> None:
    parts = (_Part(_LOCK), _Part(_LOCK), _Part(_LITERAL))
    together = composed.reads_as_one(parts, psycopg_dialect.dialect())
    assert together.names == ("r0_f_name", "r1_f_name", "r2_name_1", "r2_f_min")
    assert "%(" not in together.sql
    assert "$4" in together.sql
    assert together.sql.count("FOR UPDATE") == 2
    assert together.sql.count("LEFT OUTER JOIN LATERAL") == 3
    args = {"r0_f_name": "a", "r1_f_name": "b", "r2_name_1": "fixed", "r2_f_min": 5}
    assert together.values(args) == ["a", "b", "fixed", 5]


def test_a_batch_reads_a_row_per_transaction() -> None:
    by_row = composed.reads_by_row((_Part(_LOCK),), 3, psycopg_dialect.dialect())
    assert by_row.names == ("m0r0_f_name", "m1r0_f_name", "m2r0_f_name")
    assert by_row.sql.count("UNION ALL") == 2


def test_inserts_become_one_statement_of_ctes() -> None:
    parts = tuple(_Part(_INSERT, ["name", "amount"]) for _ in range(3))
    together = composed.inserts_as_one(parts, psycopg_dialect.dialect())
    assert together.sql.startswith("WITH d0 AS")
    assert together.sql.count("INSERT INTO composed_probe") == 3
    assert sorted(together.names) == sorted(
        f"d{i}_{k}" for i in range(3) for k in ("name", "amount")
    )


@pytest.fixture
def pg(tmp_path: Path) -> Iterator[Database]:
    with probe_database("postgres", tmp_path, _META) as database:
        yield database


def test_an_unlocked_transaction_reads_each_row_it_announced(pg: Database) -> None:
    with pg.write() as conn:
        statements.execute(conn, _INSERT, {"name": "b", "amount": 2})
    plan = ReadPlan()
    first, second = plan.read(_LOCK, {"f_name": "a"}), plan.read(_LOCK, {"f_name": "c"})
    sent: list[int] = []

    def work(conn: sa.Connection) -> tuple[object, object]:
        found = first.first(conn), second.first(conn)
        statements.defer(conn, _INSERT, {"name": "a", "amount": 1})
        statements.defer(conn, _INSERT, {"name": "c", "amount": 3})
        transaction = statements.transaction_of(conn)
        assert transaction is not None
        sent.append(transaction.sent)
        return found

    assert pg.transact(work, plan=plan) == (None, None)
    assert sent == [1]  # the reads as one statement, unlocked (the INSERTs go at the end)
    with pg.read() as conn:
        rows = conn.execute(sa.select(_T.c.name, _T.c.amount).order_by(_T.c.name)).all()
    assert [tuple(row) for row in rows] == [("a", 1), ("b", 2), ("c", 3)]
    plan = ReadPlan()
    found_b, found_c = plan.read(_LOCK, {"f_name": "b"}), plan.read(_LOCK, {"f_name": "c"})
    rows_found = pg.transact(lambda conn: (found_b.first(conn), found_c.first(conn)), plan=plan)
    assert [tuple(row) for row in rows_found] == [("b", 2), ("c", 3)]
