"""`SharedRateLimiter`: two processes' limiters (two `Database` objects) count one limit."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from workbench.sandbox.edge.ratelimit_shared import SharedRateLimiter
from workbench.sandbox.fixtures import DEMO_MERCHANT_ID
from workbench.sandbox.runtime import SandboxRuntime

KEY = "pk_test_wb_demo_0001"


@pytest.fixture
def pair(two_runtimes: list[SandboxRuntime]) -> list[SharedRateLimiter]:
    """Two limiters on one database, each with its own engine, as two workers have."""
    return [SharedRateLimiter(r.db, rate=1.0, burst=3) for r in two_runtimes]


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> list[datetime]:
    """The wall clock the limiter reads; a test moves ``clock[0]``."""
    now = [datetime(2026, 11, 23, 12, 0, tzinfo=UTC)]
    monkeypatch.setattr("workbench.sandbox.edge.ratelimit_shared.wall_now", lambda: now[0])
    return now


def test_burst_is_shared_between_workers(
    pair: list[SharedRateLimiter], clock: list[datetime]
) -> None:
    a, b = pair
    answers = [limiter.check(DEMO_MERCHANT_ID, KEY) for limiter in (a, b, a, b)]
    assert answers[:3] == [None, None, None]
    assert answers[3] == pytest.approx(1.0)  # one token short at one token a second


def test_tokens_refill_at_the_rate(pair: list[SharedRateLimiter], clock: list[datetime]) -> None:
    a, b = pair
    for _ in range(3):
        assert a.check(DEMO_MERCHANT_ID, KEY) is None
    assert b.check(DEMO_MERCHANT_ID, KEY) is not None
    clock[0] += timedelta(seconds=2)
    assert [b.check(DEMO_MERCHANT_ID, KEY) for _ in range(3)][:2] == [None, None]
    assert a.check(DEMO_MERCHANT_ID, KEY) is not None


def test_own_limit_applies_even_when_the_default_is_off(
    pair: list[SharedRateLimiter], clock: list[datetime]
) -> None:
    a, b = pair
    a.rate = b.rate = 0
    assert all(a.check(DEMO_MERCHANT_ID, KEY) is None for _ in range(10))
    own = (0.5, 1)
    assert a.check(DEMO_MERCHANT_ID, KEY, own) is None
    assert b.check(DEMO_MERCHANT_ID, KEY, own) == pytest.approx(2.0)


def test_forget_fills_the_merchant_buckets_again(
    pair: list[SharedRateLimiter], clock: list[datetime]
) -> None:
    a, b = pair
    for _ in range(3):
        a.check(DEMO_MERCHANT_ID, KEY)
    assert b.check(DEMO_MERCHANT_ID, KEY) is not None
    a.forget(DEMO_MERCHANT_ID)
    assert b.check(DEMO_MERCHANT_ID, KEY) is None


def test_a_new_limit_starts_with_a_full_bucket_whatever_the_old_one_left(
    pair: list[SharedRateLimiter], clock: list[datetime]
) -> None:
    # A worker whose key record is a guess (PostgreSQL) may still take under the limit the
    # key had: those takes must not empty the bucket the new limit is counted in.
    a, b = pair
    old = (0.001, 4)
    assert [a.check(DEMO_MERCHANT_ID, KEY, old) is None for _ in range(5)] == [True] * 4 + [False]
    assert b.check(DEMO_MERCHANT_ID, KEY) is None  # the default limit's own bucket, full
    assert [b.check(DEMO_MERCHANT_ID, KEY) is None for _ in range(3)] == [True, True, False]
    assert a.check(DEMO_MERCHANT_ID, KEY, old) is not None  # the old one stays empty
