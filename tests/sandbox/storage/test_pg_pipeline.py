"""`statements.defer` and `statements.reading_ahead`: what travels together on PostgreSQL
behaves as if each statement ran on its own, on both backends."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa

from tests.sandbox.storage.probes import probe_database
from workbench.sandbox.storage import Database, statements

_META = sa.MetaData()
_T = sa.Table(
    "pipeline_probe",
    _META,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("name", sa.String(40), nullable=False, unique=True),
    sa.Column("flag", sa.Boolean, nullable=False, default=False),
)
_INSERT = sa.insert(_T)
_BY_NAME = sa.select(_T).where(_T.c.name == sa.bindparam("f_name"))
_FLAG = sa.update(_T).where(_T.c.name == sa.bindparam("f_name")).values(flag=True)
_COUNT = sa.select(sa.func.count()).select_from(_T)


@pytest.fixture(params=["sqlite", "postgres"])
def db(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Database]:
    with probe_database(request.param, tmp_path, _META) as database:
        yield database


def _count(db: Database) -> int:
    with db.read() as conn:
        return int(statements.scalar(conn, _COUNT, {}))


def _insert_twice(db: Database) -> None:
    with db.write() as conn:
        statements.defer(conn, _INSERT, {"name": "kept?"})
        statements.defer(conn, _INSERT, {"name": "twice"})
        statements.defer(conn, _INSERT, {"name": "twice"})  # PostgreSQL: raised at COMMIT


def _fail_after_writing(db: Database) -> None:
    with db.write() as conn:
        statements.defer(conn, _INSERT, {"name": "a"})
        assert statements.scalar(conn, _COUNT, {}) == 1
        statements.defer(conn, _INSERT, {"name": "b"})
        raise RuntimeError("the work failed")


def _fail_while_reading(db: Database) -> None:
    with db.read() as conn:
        statements.scalar(conn, _COUNT, {})
        raise RuntimeError("a failed read")


def test_a_deferred_duplicate_still_raises_and_nothing_is_kept(db: Database) -> None:
    with pytest.raises(sa.exc.IntegrityError):
        _insert_twice(db)
    assert _count(db) == 0
    with db.write() as conn:  # the connection is usable again
        statements.defer(conn, _INSERT, {"name": "twice"})
    assert _count(db) == 1


def test_deferred_writes_are_seen_by_every_later_statement(db: Database) -> None:
    with db.write() as conn:
        statements.defer(conn, _INSERT, {"name": "a"})
        assert statements.scalar(conn, _COUNT, {}) == 1  # sent with this read, before it
        statements.defer(conn, _INSERT, {"name": "b"})
        assert conn.execute(_COUNT).scalar() == 2  # and before SQLAlchemy's own execute
    assert _count(db) == 2


def test_an_exception_undoes_deferred_writes(db: Database) -> None:
    with pytest.raises(RuntimeError, match="the work failed"):
        _fail_after_writing(db)
    assert _count(db) == 0


def test_a_read_ahead_is_answered_once_from_the_first_round_trip(db: Database) -> None:
    with db.write() as conn:
        statements.execute(conn, _INSERT, {"name": "a"})
    ahead = ((_BY_NAME, {"f_name": "a"}), (_BY_NAME, {"f_name": "zz"}))
    with statements.reading_ahead(*ahead), db.write() as conn:
        assert statements.scalar(conn, _COUNT, {}) == 1
        transaction = statements.transaction_of(conn)
        sent = None if transaction is None else transaction.sent
        assert statements.fetch_one(conn, _BY_NAME, {"f_name": "a"}).name == "a"
        assert statements.fetch_one(conn, _BY_NAME, {"f_name": "zz"}) is None
        if transaction is not None:  # PostgreSQL: BEGIN, the count, the two reads
            assert sent == 4
            assert transaction.sent == 4  # both answered without another statement
        assert statements.fetch_one(conn, _BY_NAME, {"f_name": "a"}).name == "a"
        if transaction is not None:
            assert transaction.sent == 5  # a second use goes to the server


def test_a_write_drops_what_was_read_ahead(db: Database) -> None:
    with db.write() as conn:
        statements.execute(conn, _INSERT, {"name": "a"})
    with statements.reading_ahead((_BY_NAME, {"f_name": "a"})):
        with db.write() as conn:
            assert statements.scalar(conn, _COUNT, {}) == 1
            statements.execute(conn, _FLAG, {"f_name": "a"})
            assert statements.fetch_one(conn, _BY_NAME, {"f_name": "a"}).flag is True
        with db.write() as conn:
            assert statements.scalar(conn, _COUNT, {}) == 1
            statements.defer(conn, _INSERT, {"name": "b"})
            assert statements.fetch_one(conn, _BY_NAME, {"f_name": "a"}).flag is True
        with db.write() as conn:
            assert statements.scalar(conn, _COUNT, {}) == 2
            conn.execute(sa.update(_T).values(flag=False))
            assert statements.fetch_one(conn, _BY_NAME, {"f_name": "a"}).flag is False


@pytest.fixture
def pg_db(tmp_path: Path) -> Iterator[Database]:
    with probe_database("postgres", tmp_path, _META) as database:
        yield database


def test_a_pooled_connection_is_handed_back_as_it_was_taken(pg_db: Database) -> None:
    # PostgreSQL only: the driver connection is in autocommit mode during a transaction.
    db = pg_db
    with db.write() as conn:
        statements.defer(conn, _INSERT, {"name": "a"})
    with pytest.raises(sa.exc.IntegrityError):
        _insert_twice(db)
    with pytest.raises(RuntimeError, match="a failed read"):
        _fail_while_reading(db)
    with db.engine.connect() as conn:  # LIFO pool: the connection used just now
        raw = conn.connection.driver_connection
        assert raw is not None
        assert raw.autocommit is False
        assert raw.info.transaction_status == 0  # idle
        assert statements.transaction_of(conn) is None
