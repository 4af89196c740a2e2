"""Month intervals keep the anchor day, clamped to the month's end, counted from the anchor."""

from __future__ import annotations

from datetime import UTC, datetime

import httpx2
import pytest

from tests.sandbox.subscriptions.api import charges, create, get
from tests.sandbox.subscriptions.clock import advance_to, now, parse
from workbench.sandbox.subscriptions import add_months, after


def next_jan_31(client: httpx2.Client, leap: bool) -> datetime:
    year = now(client).year + 1
    while (year % 4 == 0) != leap:
        year += 1
    return datetime(year, 1, 31, 10, 0, tzinfo=UTC)


@pytest.mark.parametrize("leap", [False, True], ids=["common-year", "leap-year"])
def test_created_on_jan_31_renews_on_the_last_of_february_then_mar_31(
    client: httpx2.Client, leap: bool
) -> None:
    start = next_jan_31(client, leap)
    advance_to(client, start)
    sub = create(client)
    created = parse(sub["createdAt"])
    assert created.day == 31
    assert created.month == 1
    feb_end = 29 if leap else 28
    assert parse(sub["nextChargeAt"]).date() == created.date().replace(month=2, day=feb_end)
    advance_to(client, created.replace(month=5, day=1))
    stamps = [parse(i["chargedAt"]) for i in charges(client, sub["id"])]
    assert [(s.month, s.day) for s in stamps] == [(2, feb_end), (3, 31), (4, 30)]
    assert parse(get(client, sub["id"])["nextChargeAt"]).date() == created.date().replace(
        month=5, day=31
    )


def test_month_arithmetic_counts_from_the_anchor() -> None:
    jan31 = datetime(2027, 1, 31, 9, 30, tzinfo=UTC)
    assert [after(jan31, "month", 1, n).date().isoformat() for n in range(1, 5)] == [
        "2027-02-28",
        "2027-03-31",
        "2027-04-30",
        "2027-05-31",
    ]
    assert add_months(datetime(2028, 2, 29, tzinfo=UTC), 12).date().isoformat() == "2029-02-28"
    assert after(datetime(2028, 2, 29, tzinfo=UTC), "year", 1, 4).day == 29
    assert after(jan31, "month", 3, 1).date().isoformat() == "2027-04-30"
    assert after(jan31, "week", 2, 3) == datetime(2027, 3, 14, 9, 30, tzinfo=UTC)
    with pytest.raises(ValueError, match="unknown interval unit"):
        after(jan31, "hour", 1, 1)
