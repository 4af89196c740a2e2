"""`UTCDateTime` on SQLite: SQLAlchemy's own ``DATETIME`` text, written and read faster.

Files written by an earlier version (SQLAlchemy's formatter) must read back the same,
and comparisons in SQL must keep working on the text, so the bytes must not change.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest
import sqlalchemy as sa
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.sandbox.storage import UTCDateTime

_META = sa.MetaData()
_T = sa.Table(
    "utc_probe",
    _META,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("ours", UTCDateTime),
    sa.Column("theirs", sa.DateTime),
)

aware = st.datetimes(
    min_value=datetime(1, 1, 2),
    max_value=datetime(9999, 12, 30),
    timezones=st.builds(
        timezone, st.integers(-14 * 60, 14 * 60).map(lambda m: timedelta(minutes=m))
    ),
)


@pytest.fixture(scope="module")
def engine() -> sa.Engine:
    engine = sa.create_engine("sqlite://")
    _META.create_all(engine)
    return engine


@settings(max_examples=200)
@given(aware)
def test_text_is_sqlalchemys_and_reads_back_equal(engine: sa.Engine, moment: datetime) -> None:
    naive_utc = moment.astimezone(UTC).replace(tzinfo=None)
    with engine.begin() as conn:
        conn.execute(sa.delete(_T))
        conn.execute(sa.insert(_T).values(id=1, ours=moment, theirs=naive_utc))
        ours, theirs = conn.exec_driver_sql("SELECT ours, theirs FROM utc_probe").one()
        read = conn.execute(sa.select(_T.c.ours)).scalar_one()
    assert ours == theirs
    assert read == moment
    assert read.tzinfo is UTC


def test_text_written_by_sqlalchemys_formatter_reads_back(engine: sa.Engine) -> None:
    with engine.begin() as conn:
        conn.execute(sa.delete(_T))
        conn.exec_driver_sql(
            "INSERT INTO utc_probe (id, ours) VALUES (1, '2026-11-23 16:07:44.250000'),"
            " (2, '2026-11-23 16:07:45')"
        )
        read = conn.execute(sa.select(_T.c.ours).order_by(_T.c.id)).scalars().all()
    assert read == [
        datetime(2026, 11, 23, 16, 7, 44, 250000, tzinfo=UTC),
        datetime(2026, 11, 23, 16, 7, 45, tzinfo=UTC),
    ]


def test_comparisons_in_sql_still_order_by_time(engine: sa.Engine) -> None:
    base = datetime(2026, 11, 23, 12, tzinfo=UTC)
    with engine.begin() as conn:
        conn.execute(sa.delete(_T))
        conn.execute(
            sa.insert(_T),
            [{"id": n, "ours": base + timedelta(seconds=n)} for n in range(5)],
        )
        # Bound in another offset: compared as UTC text all the same.
        cut = (base + timedelta(seconds=2)).astimezone(timezone(timedelta(hours=3)))
        ids = conn.execute(sa.select(_T.c.id).where(_T.c.ours <= cut)).scalars().all()
        ddl = conn.exec_driver_sql("SELECT sql FROM sqlite_master WHERE name='utc_probe'")
        create = ddl.scalar_one()
    assert sorted(ids) == [0, 1, 2]
    assert "ours DATETIME" in create


def test_naive_datetimes_are_refused(engine: sa.Engine) -> None:
    with engine.begin() as conn, pytest.raises(sa.exc.StatementError, match="naive"):
        conn.execute(sa.insert(_T).values(id=9, ours=datetime(2026, 1, 1)))
