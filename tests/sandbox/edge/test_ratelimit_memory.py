"""The one-process limiter forgets the buckets that have refilled.

On SQLite the per-key and per-address buckets live in the process (`RateLimiter`): a
bucket per client address ever seen would otherwise stay in memory for the life of the
server. A refilled bucket answers exactly as a missing one does, so a sweep (at most once
a `SWEEP_INTERVAL`) drops those and keeps the ones still refilling.
"""

from __future__ import annotations

import pytest

from workbench.sandbox.edge import ratelimit
from workbench.sandbox.edge.ratelimit import SWEEP_INTERVAL, RateLimiter


class FakeMonotonic:
    """`time.monotonic` under the test's hand."""

    def __init__(self) -> None:
        self.now = 1_000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> FakeMonotonic:
    fake = FakeMonotonic()
    monkeypatch.setattr(ratelimit.time, "monotonic", fake)
    return fake


def test_refilled_buckets_are_swept_and_refilling_ones_kept(clock: FakeMonotonic) -> None:
    limiter = RateLimiter(rate=1.0, burst=5)
    for n in range(100):
        assert limiter.check("addr", f"198.51.100.{n}") is None
    for _ in range(5):
        limiter.check("addr", "203.0.113.9")  # emptied: 5 s to refill
    assert limiter.check("addr", "203.0.113.9") is not None
    assert len(limiter) == 101

    clock.now += SWEEP_INTERVAL  # every bucket refilled long ago
    limiter.check("addr", "203.0.113.9")  # the sweep runs first, then this take
    assert len(limiter) == 1

    clock.now += SWEEP_INTERVAL - 1  # before the next sweep: nothing is dropped
    limiter.check("addr", "192.0.2.1")
    assert len(limiter) == 2


def test_a_bucket_still_refilling_keeps_its_count_across_a_sweep(clock: FakeMonotonic) -> None:
    limiter = RateLimiter(rate=0.01, burst=2)  # 100 s per token
    assert limiter.check("m", "k") is None
    assert limiter.check("m", "k") is None
    assert limiter.check("m", "k") is not None
    clock.now += SWEEP_INTERVAL  # 0.6 of a token back: still refilling
    assert limiter.check("m", "k") is not None  # not forgotten, so not full again
    assert len(limiter) == 1
