"""`iso` writes every aware datetime as the spec's UTC text with a `Z`."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

from hypothesis import given
from hypothesis import strategies as st

from workbench.sandbox.clock import iso

aware = st.datetimes(
    min_value=datetime(1, 1, 2),
    max_value=datetime(9999, 12, 30),
    timezones=st.builds(
        timezone, st.integers(-14 * 60, 14 * 60).map(lambda m: timedelta(minutes=m))
    ),
)


@given(aware.filter(lambda m: m.astimezone(UTC).year >= 1000))
def test_iso_is_strftime_in_utc(moment: datetime) -> None:
    assert iso(moment) == moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def test_iso_pads_the_year_where_strftime_does_not() -> None:
    assert iso(datetime(999, 1, 2, 3, 4, 5, 678, tzinfo=UTC)) == "0999-01-02T03:04:05Z"
    assert iso(None) is None
