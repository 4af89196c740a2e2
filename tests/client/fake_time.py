"""A fake clock and sleep for the offline client tests: time moves only when the client sleeps."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

__all__ = ["FakeTime"]


@dataclass
class FakeTime:
    """A clock that only moves when the client sleeps (or the test advances it)."""

    now: datetime = field(default_factory=lambda: datetime(2026, 3, 14, 9, 26, 53, tzinfo=UTC))
    sleeps: list[float] = field(default_factory=list)

    def clock(self) -> datetime:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += timedelta(seconds=max(seconds, 1.0))

    async def async_sleep(self, seconds: float) -> None:
        self.sleep(seconds)
