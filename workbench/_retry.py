"""Which failures are retried, and how long to wait before the next attempt.

Retrying is safe for money only because every state-changing call carries one
Idempotency-Key for all its attempts. Even so, some answers must never be
retried: SVC-GW-2001 (a different payload under the same key; retrying cannot
fix it) and any other 4xx, except the two that mean "not yet" (408, 429) and
SVC-GW-2002 (the first attempt under this key is still running).
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime

import httpx2

__all__ = ["DEFAULT_MAX_RETRIES", "RetryPolicy", "parse_retry_after"]

DEFAULT_MAX_RETRIES = 2

_RETRY_STATUSES = frozenset({408, 429})
_RETRY_CODES = frozenset({"SVC-GW-2002"})
_NEVER_CODES = frozenset({"SVC-GW-2001"})


def parse_retry_after(value: str | None, *, now: datetime | None = None) -> float | None:
    """Seconds to wait from a ``Retry-After`` header (delta-seconds or HTTP-date).

    Returns ``None`` for a missing or unreadable header; never a negative number.
    """
    if not value:
        return None
    text = value.strip()
    try:
        return max(0.0, float(text))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(text)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    current = now if now is not None else datetime.now(UTC)
    return max(0.0, (when - current).total_seconds())


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """How many times to retry and how long to wait in between.

    The n-th retry (from 0) waits ``initial_delay * 2**n`` seconds, at most
    ``max_delay``, less a random jitter of up to ``jitter`` of that, unless the
    response's ``Retry-After`` says otherwise (capped at ``max_retry_after``).

    Attributes:
        max_retries: retries after the first attempt (0 disables retrying).
        initial_delay: the first backoff, in seconds.
        max_delay: the longest backoff, in seconds.
        jitter: the fraction of the backoff that is randomised (0 to 1).
        max_retry_after: the longest ``Retry-After`` honoured, in seconds.
    """

    max_retries: int = DEFAULT_MAX_RETRIES
    initial_delay: float = 0.5
    max_delay: float = 8.0
    jitter: float = 0.25
    max_retry_after: float = 60.0

    def __post_init__(self) -> None:
        if self.max_retries < 0:
            raise ValueError("max_retries must be >= 0")
        if not 0.0 <= self.jitter <= 1.0:
            raise ValueError("jitter must be between 0 and 1")

    @staticmethod
    def should_retry_response(response: httpx2.Response, code: str) -> bool:
        """Whether an error response (with envelope ``code``) may be retried."""
        if code in _NEVER_CODES:
            return False
        if code in _RETRY_CODES:
            return True
        status = response.status_code
        return status in _RETRY_STATUSES or status >= 500

    def delay(self, retry: int, response: httpx2.Response | None = None) -> float:
        """Seconds to wait before retry number ``retry`` (counted from 0)."""
        if response is not None:
            after = parse_retry_after(response.headers.get("Retry-After"))
            if after is not None:
                return min(after, self.max_retry_after)
        backoff = min(self.max_delay, self.initial_delay * float(2**retry))
        return backoff * (1.0 - self.jitter * random.random())  # noqa: S311 - not crypto
