"""Interval arithmetic: the moment ``n`` intervals after an anchor.

Days and weeks are exact multiples of 24 hours. Months and years keep the anchor's
day of month and clamp it to the target month's last day, always counted from the
anchor (so a subscription created on Jan 31 renews Feb 28 or 29, then Mar 31).
"""

from __future__ import annotations

import calendar
from datetime import datetime, timedelta
from typing import Literal

__all__ = ["INTERVAL_UNITS", "IntervalUnit", "add_months", "after"]

IntervalUnit = Literal["day", "week", "month", "year"]
INTERVAL_UNITS: tuple[IntervalUnit, ...] = ("day", "week", "month", "year")


def add_months(moment: datetime, months: int) -> datetime:
    """``moment`` moved by whole months, the day clamped to the month's end."""
    index = moment.year * 12 + (moment.month - 1) + months
    year, month = divmod(index, 12)
    last = calendar.monthrange(year, month + 1)[1]
    return moment.replace(year=year, month=month + 1, day=min(moment.day, last))


def after(anchor: datetime, unit: str, count: int, periods: int) -> datetime:
    """The moment ``periods`` intervals of ``count`` ``unit`` after ``anchor``.

    Raises:
        ValueError: for an unknown unit.
    """
    steps = count * periods
    if unit == "day":
        return anchor + timedelta(days=steps)
    if unit == "week":
        return anchor + timedelta(weeks=steps)
    if unit == "month":
        return add_months(anchor, steps)
    if unit == "year":
        return add_months(anchor, 12 * steps)
    raise ValueError(f"unknown interval unit {unit!r}")
