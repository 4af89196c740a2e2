"""Time in the subscription tests: the merchant's business clock and the reconciler's tick.

Renewals fall due on the business clock; a test advances it through the control routes
and then ticks the reconciler once, so no outcome waits on the wall clock.
"""

from __future__ import annotations

from datetime import UTC, datetime

import httpx2

from workbench.sandbox.control.models import MAX_ADVANCE_SECONDS

__all__ = ["advance", "advance_to", "now", "parse", "tick"]


def advance(client: httpx2.Client, seconds: float) -> datetime:
    """Advance the business clock (in steps the sandbox takes); returns the new time."""
    left = int(seconds)
    while True:
        step = min(left, MAX_ADVANCE_SECONDS)
        response = client.post("/sandbox/clock/advance", json={"seconds": step})
        assert response.status_code == 200, response.text
        left -= step
        if left == 0:
            return parse(response.json()["businessTime"])


def tick(client: httpx2.Client) -> None:
    """One reconciler pass."""
    assert client.post("/sandbox/reconciler/tick", json={}).status_code == 200


def now(client: httpx2.Client) -> datetime:
    """The merchant's business time."""
    return parse(client.get("/sandbox/fixtures").json()["businessTime"])


def advance_to(client: httpx2.Client, moment: datetime) -> datetime:
    """Advance the business clock to ``moment`` (to the second)."""
    seconds = (moment - now(client)).total_seconds()
    assert seconds >= 0
    return advance(client, seconds + 1)


def parse(text: str) -> datetime:
    """A ``Z`` timestamp."""
    return datetime.fromisoformat(text.replace("Z", "+00:00")).astimezone(UTC)
