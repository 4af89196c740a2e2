"""Time: the wall clock (signatures), the per-merchant business clock, and formatting.

Each merchant has its own business clock, an offset from the wall clock kept in the
database, so one test suite advancing time does not move another's. The signature
skew check never looks at it.
"""

from __future__ import annotations

import functools
from datetime import UTC, datetime, timedelta

import sqlalchemy as sa

from workbench.sandbox import tables
from workbench.sandbox.errors import merchant_gone

__all__ = ["business_now", "business_time", "iso", "set_business_time", "wall_now"]


def wall_now() -> datetime:
    """The real time, aware UTC."""
    return datetime.now(UTC)


def iso(moment: datetime | None) -> str | None:
    """Format an aware time as ``YYYY-MM-DDTHH:MM:SSZ`` (``None`` stays ``None``)."""
    if moment is None:
        return None
    if moment.tzinfo is not UTC:
        moment = moment.astimezone(UTC)
    return _iso_utc(moment)


# One answer formats the same instant several times (created, completed, the event),
# and formatting costs several times a cache lookup.
@functools.lru_cache(maxsize=64)
def _iso_utc(moment: datetime) -> str:
    # What ``moment.replace(microsecond=0, tzinfo=None).isoformat() + "Z"`` gives, by
    # ``%``: isoformat's C formatter costs three times as many instructions.
    return "%04d-%02d-%02dT%02d:%02d:%02dZ" % (  # noqa: UP031 (an f-string: twice the time)
        moment.year,
        moment.month,
        moment.day,
        moment.hour,
        moment.minute,
        moment.second,
    )


_OFFSET = sa.select(tables.merchants.c.clock_offset_us).where(
    tables.merchants.c.id == sa.bindparam("f_merchant")
)


def business_now(conn: sa.Connection, merchant_id: str) -> datetime:
    """The merchant's business time: the wall clock plus its stored offset.

    Raises:
        ServiceError: SVC-GW-1003, the merchant was deleted meanwhile (`merchant_gone`).
    """
    offset = conn.execute(_OFFSET, {"f_merchant": merchant_id}).scalar()
    if offset is None:
        raise merchant_gone()
    return business_time(int(offset))


def business_time(offset_us: int) -> datetime:
    """The business time of a merchant whose clock offset (read just now) is ``offset_us``."""
    return wall_now() + timedelta(microseconds=offset_us)


def set_business_time(conn: sa.Connection, merchant_id: str, moment: datetime) -> None:
    """Move the merchant's business clock so that it reads ``moment`` now (never backwards)."""
    current = business_now(conn, merchant_id)
    if moment <= current:
        return
    delta = moment - wall_now()
    offset = delta // timedelta(microseconds=1)
    conn.execute(
        sa.update(tables.merchants)
        .where(tables.merchants.c.id == merchant_id)
        .values(clock_offset_us=offset)
    )
