"""`workbench.sandbox.storage.statements`: Core statements on the DB-API cursor, both backends."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
import sqlalchemy as sa

from tests.sandbox.storage.probes import probe_database
from workbench.sandbox.storage import Database, UTCDateTime, statements

_META = sa.MetaData()
_T = sa.Table(
    "prepared_probe",
    _META,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("name", sa.String(40), nullable=False, unique=True),
    sa.Column("at", UTCDateTime, nullable=False),
    sa.Column("flag", sa.Boolean, nullable=False, default=False),
    sa.Column("amount", sa.BigInteger, nullable=False, default=0),
    sa.Column("blob", sa.LargeBinary),
)
_INSERT = sa.insert(_T).returning(_T.c.id)
_BY_NAME = sa.select(_T).where(_T.c.name == sa.bindparam("f_name"))
_RENAME = (
    sa.update(_T)
    .where(_T.c.id == sa.bindparam("f_id"))
    .values(name=sa.bindparam("f_name"), flag=True)
)
_COUNT = sa.select(sa.func.count()).select_from(_T)


@pytest.fixture(params=["sqlite", "postgres"])
def db(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Database]:
    with probe_database(request.param, tmp_path, _META) as database:
        yield database


def test_values_round_trip_through_the_column_types(db: Database) -> None:
    at = datetime(2026, 11, 23, 12, 30, 5, 123456, tzinfo=UTC)
    with db.write() as conn:
        inserted = statements.fetch_one(conn, _INSERT, {"name": "a", "at": at, "blob": b"\x00\x01"})
        row = statements.fetch_one(conn, _BY_NAME, {"f_name": "a"})
    assert row.id == inserted.id
    assert row.at == at  # aware UTC back, not a string
    assert row.at.tzinfo is not None
    assert row.flag is False  # the columns' Python-side defaults
    assert row.amount == 0
    assert bytes(row.blob) == b"\x00\x01"
    assert row._asdict()["name"] == "a"
    # What SQLAlchemy's own execute reads back is the same.
    with db.read() as conn:
        assert conn.execute(sa.select(_T.c.at, _T.c.flag)).one() == (at, False)


def test_update_counts_rows_and_literal_values_apply(db: Database) -> None:
    now = datetime.now(UTC)
    with db.write() as conn:
        ident = statements.fetch_one(conn, _INSERT, {"name": "b", "at": now}).id
        assert statements.execute(conn, _RENAME, {"f_id": ident, "f_name": "c"}) == 1
        assert statements.execute(conn, _RENAME, {"f_id": ident + 99, "f_name": "d"}) == 0
        row = statements.fetch_one(conn, _BY_NAME, {"f_name": "c"})
    assert row.flag is True


def test_a_unique_violation_is_sqlalchemys_integrity_error_and_rolls_back(db: Database) -> None:
    now = datetime.now(UTC)
    with db.write() as conn:
        statements.fetch_one(conn, _INSERT, {"name": "e", "at": now})

    def both(conn: sa.Connection) -> None:
        statements.execute(conn, sa.insert(_T), {"name": "f", "at": now})
        statements.execute(conn, sa.insert(_T), {"name": "e", "at": now})

    with pytest.raises(sa.exc.IntegrityError):
        db.transact(both, attempts=1)
    with db.read() as conn:
        assert statements.scalar(conn, _COUNT, {}) == 1  # "f" went with the transaction
        assert statements.fetch_all(conn, _BY_NAME, {"f_name": "f"}) == []


def test_a_statement_built_per_call_is_never_mistaken_for_another(db: Database) -> None:
    # Cache entries are keyed by id(); a statement collected and another allocated at
    # its address must not inherit its compiled SQL.
    now = datetime.now(UTC)
    with db.write() as conn:
        for index in range(50):
            statements.execute(conn, sa.insert(_T), {"name": f"n{index}", "at": now})
            by_name = sa.select(_T.c.name).where(_T.c.name == sa.bindparam("f_name"))
            assert statements.scalar(conn, by_name, {"f_name": f"n{index}"}) == f"n{index}"
            count = sa.select(sa.func.count()).select_from(_T)
            assert statements.scalar(conn, count, {}) == index + 1
