"""The sandbox's controls for a test: its business clock, and a failure for the next request."""

from __future__ import annotations

from datetime import datetime, timedelta

from workbench._client import Client
from workbench.resources.sandbox import FailureMode

__all__ = ["FailNext", "SandboxClock"]

#: The furthest the sandbox moves its clock in one call (400 days).
_MAX_ADVANCE = 400 * 24 * 3600


class SandboxClock:
    """The sandbox's business clock for one merchant (the client's).

    Moving it runs the work that falls due on the way, in order: renewals, refund
    settlement, 3-D Secure timeouts, webhook retries.

    Args:
        client: a client of the merchant whose clock this is.
    """

    def __init__(self, client: Client) -> None:
        self._client = client

    def __repr__(self) -> str:
        return f"SandboxClock({self._client.base_url})"

    def advance(
        self, *, days: int = 0, hours: int = 0, minutes: int = 0, seconds: int = 0
    ) -> datetime:
        """Move the clock forward and return the business time reached (aware UTC).

        The sandbox moves at most 400 days a call; a longer move is made in such steps.

        Raises:
            ValueError: the total is negative or not a whole number of seconds.
        """
        step = timedelta(days=days, hours=hours, minutes=minutes, seconds=seconds)
        total = step.total_seconds()
        if total < 0 or total != int(total):
            raise ValueError("the clock moves forward by whole seconds only")
        left = int(total)
        while True:
            now = self._client.sandbox.advance_clock(min(left, _MAX_ADVANCE)).business_time
            left -= min(left, _MAX_ADVANCE)
            if left == 0:
                return now


class FailNext:
    """Makes the merchant's next request fail once, as a real service sometimes does.

    Call it with ``"429"``, ``"500"`` or ``"timeout"`` (``seconds``: how long the
    timeout holds the request). The client's retries then meet the failure.

    Args:
        client: a client of the merchant whose next request fails.
    """

    def __init__(self, client: Client) -> None:
        self._client = client

    def __repr__(self) -> str:
        return f"FailNext({self._client.base_url})"

    def __call__(self, mode: FailureMode, *, seconds: int | None = None) -> str:
        """Arm the failure; returns the mode the sandbox armed."""
        return self._client.sandbox.fail_next(mode, seconds=seconds).fail_next
