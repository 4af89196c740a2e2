"""The routes that take no signature are rate-limited per client address."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta

import httpx2
import pytest
import sqlalchemy as sa

from tests.postgres import database_url
from tests.sandbox.clients import signed_client
from tests.sandbox.envelope import assert_envelope
from workbench.sandbox import SandboxConfig, SandboxServer, tables
from workbench.sandbox.edge.ratelimit_address import PURGE_INTERVAL, SharedAddressLimiter
from workbench.sandbox.runtime import SandboxRuntime

BURST = 3


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def limited(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[SandboxServer]:
    """A sandbox whose unsigned routes allow an address ``BURST`` requests, then ~none."""
    with database_url(request.param, tmp_path_factory.mktemp("addr")) as url:
        config = SandboxConfig(
            db_url=url,
            run_reconciler_in_background=False,
            public_rate_limit_per_second=0.001,
            public_rate_limit_burst=BURST,
        )
        with SandboxServer(config) as running:
            yield running


def test_unsigned_routes_answer_429_past_the_address_limit(limited: SandboxServer) -> None:
    with httpx2.Client(base_url=limited.base_url, timeout=30, verify=False) as anon:
        paths = [
            "/v1/payments/pay_missing/public-status",
            "/v1/public/subscriptions/0123456789abcdef/status",
            "/checkout/cs_missing",
        ]
        answers = [anon.get(paths[i % len(paths)]) for i in range(BURST)]
        assert all(r.status_code != 429 for r in answers), [r.status_code for r in answers]
        for path in paths:  # one bucket per address, whichever unsigned route it asks
            refused = anon.get(path)
            assert_envelope(refused, 429, "SVC-GW-1004")
            assert "client address" in refused.json()["message"]
            assert int(refused.headers["retry-after"]) >= 1
        # Static files of the hosted pages are not counted; signed requests have their
        # own per-key limit.
        assert anon.get("/checkout/static/checkout.css").status_code == 200
    with signed_client(limited.base_url) as client:
        assert client.get("/v1/payments/pay_missing").status_code == 404


@pytest.fixture
def pair(two_runtimes: list[SandboxRuntime]) -> list[SharedAddressLimiter]:
    """Two limiters on one database, each with its own engine, as two workers have."""
    return [SharedAddressLimiter(r.db, rate=1.0, burst=3) for r in two_runtimes]


def test_address_buckets_are_counted_in_the_database(
    pair: list[SharedAddressLimiter], monkeypatch: pytest.MonkeyPatch
) -> None:
    now = datetime(2026, 11, 26, 12, 0, tzinfo=UTC)
    monkeypatch.setattr("workbench.sandbox.edge.ratelimit_shared.wall_now", lambda: now)
    a, b = pair
    answers = [limiter.check("", "203.0.113.7") for limiter in (a, b, a, b)]
    assert answers[:3] == [None, None, None]
    assert answers[3] == pytest.approx(1.0)
    assert a.check("", "203.0.113.8") is None  # another address, its own bucket


def _addresses(limiter: SharedAddressLimiter) -> set[str]:
    with limiter.db.read() as conn:
        return set(conn.scalars(sa.select(tables.address_buckets.c.address)))


def test_buckets_that_have_refilled_are_purged(
    pair: list[SharedAddressLimiter], monkeypatch: pytest.MonkeyPatch
) -> None:
    """An address's row does not outlive its bucket. A full bucket is the same as none,
    so the rows idle for ``burst / rate`` seconds (3 here) go, at most once
    a `PURGE_INTERVAL`: the rows left are the addresses seen since."""
    clock = [datetime(2026, 11, 26, 12, 0, tzinfo=UTC)]
    for module in ("ratelimit_shared", "ratelimit_address"):
        monkeypatch.setattr(f"workbench.sandbox.edge.{module}.wall_now", lambda: clock[0])
    a, b = pair
    for i in range(5):
        assert a.check("", f"203.0.113.{i}") is None
    assert len(_addresses(a)) == 5
    clock[0] += timedelta(seconds=PURGE_INTERVAL - 0.5)
    assert a.check("", "198.51.100.1") is None  # not yet time to purge: nothing goes
    for _ in range(3):
        a.check("", "198.51.100.2")  # emptied: refilled only after 3 s
    assert len(_addresses(a)) == 7
    clock[0] += timedelta(seconds=1)
    assert a.check("", "198.51.100.3") is None  # this take purges
    assert _addresses(a) == {"198.51.100.1", "198.51.100.2", "198.51.100.3"}
    # Its bucket was kept: one token refilled in the second since, not a full new one.
    assert [b.check("", "198.51.100.2") is None for _ in range(2)] == [True, False]


def test_the_limit_counts_the_canonical_path_and_every_unsigned_page(
    sandbox_with: Callable[..., SandboxServer],
) -> None:
    """A trailing slash once went uncounted (``/public-status/`` is served as
    ``/public-status``); the ACS page, the demo return page and the front page were not
    counted at all. Past the burst, each is refused like the others."""
    server = sandbox_with(public_rate_limit_per_second=0.001, public_rate_limit_burst=BURST)
    slashed = "/v1/payments/pay_missing/public-status/"
    with httpx2.Client(base_url=server.base_url, timeout=30, verify=False) as anon:
        answers = [anon.get(slashed).status_code for _ in range(BURST + 2)]
        assert answers == [404] * BURST + [429, 429], answers
        for path in (
            slashed + "/",
            "/sandbox/acs/pay_missing",
            "/sandbox/acs/pay_missing/",
            "/demo/merchant/return?outcome=success",
            "/",
            "/checkout/cs_missing/",
        ):
            assert_envelope(anon.get(path), 429, "SVC-GW-1004")
        assert_envelope(anon.post("/sandbox/acs/pay_missing", data={}), 429, "SVC-GW-1004")
        # What touches no database stays free: the pages' static files, the health check.
        assert anon.get("/checkout/static/checkout.css").status_code == 200
        assert anon.get("/healthz").status_code == 200
