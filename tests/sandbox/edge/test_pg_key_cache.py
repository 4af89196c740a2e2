"""PostgreSQL: a worker's kept API key records are guesses, confirmed on every charge.

Two sandboxes on one database stand for two workers: neither hears about what the
other changes, and a row changed in the database directly reaches neither. Sandbox A
charges first (so it keeps the key's record), then the key or its merchant's switches
change behind its back; A's next charge must answer as if it had read the row afresh,
and a refused attempt must leave nothing behind.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest
import sqlalchemy as sa

from tests.postgres import database_url
from tests.sandbox.bodies import charge_body
from tests.sandbox.clients import signed_client
from tests.sandbox.envelope import assert_envelope
from workbench.config import DEFAULT_API_KEY, DEFAULT_SECRET_KEY
from workbench.sandbox import OTHER_API_KEY, OTHER_SECRET_KEY, SandboxConfig, SandboxServer, tables
from workbench.sandbox.payments.tables import payments as payments_table

CHARGE = "/v1/payments/card"
Pair = tuple[SandboxServer, SandboxServer]


@pytest.fixture
def pair(tmp_path: Path) -> Iterator[Pair]:
    """Two sandboxes ("workers") on one PostgreSQL database of their own."""
    with database_url("postgres", tmp_path) as url:
        config = SandboxConfig(db_url=url, run_reconciler_in_background=False, workers=2)
        with SandboxServer(config) as first, SandboxServer(config) as second:
            yield first, second


def _charge(client: httpx2.Client) -> tuple[httpx2.Response, str]:
    body = charge_body(threeDSecure=False)
    headers = {"Idempotency-Key": str(uuid.uuid4())}
    return client.post(CHARGE, json=body, headers=headers), body["transactionId"]


def _payments(server: SandboxServer, transaction_id: str) -> int:
    p = payments_table
    with server.sandbox.db.read() as conn:
        query = sa.select(sa.func.count()).where(p.c.transaction_id == transaction_id)
        return int(conn.execute(query).scalar_one())


def _update_key(server: SandboxServer, api_key: str, **values: object) -> None:
    """Change the key's row in the database directly: no worker's engine sees the write
    (a change through one empties its own cache, `KeyCache.watch`)."""
    k = tables.api_keys
    engine = sa.create_engine(server.config.db_url, poolclass=sa.pool.NullPool)
    try:
        with engine.begin() as conn:
            conn.execute(sa.update(k).where(k.c.api_key == api_key).values(**values))
    finally:
        engine.dispose()


def _warm(server: SandboxServer, api_key: str, secret: str) -> None:
    """A charge through ``server``, which then keeps the key's record."""
    with signed_client(server.base_url, api_key, secret) as client:
        response, _ = _charge(client)
    assert response.status_code == 201, response.text
    assert server.sandbox.keys.get(api_key) is not None


def test_fail_next_set_through_another_worker_fails_the_next_charge(pair: Pair) -> None:
    a, b = pair
    _warm(a, DEFAULT_API_KEY, DEFAULT_SECRET_KEY)
    with signed_client(b.base_url) as client:
        assert client.post("/sandbox/fail-next", json={"mode": "500"}).status_code == 200
    with signed_client(a.base_url) as client:
        failed, transaction_id = _charge(client)
        after, _ = _charge(client)
    assert_envelope(failed, 500, "SVC-GW-5000")
    assert _payments(a, transaction_id) == 0  # the attempt on the old record left nothing
    assert after.status_code == 201, after.text


def test_a_key_revoked_in_the_database_is_refused_at_once(pair: Pair) -> None:
    a, _ = pair
    _warm(a, OTHER_API_KEY, OTHER_SECRET_KEY)
    _update_key(a, OTHER_API_KEY, revoked=True)
    with signed_client(a.base_url, OTHER_API_KEY, OTHER_SECRET_KEY) as client:
        refused, transaction_id = _charge(client)
        read = client.get("/v1/payments/pay_nope")
    body = assert_envelope(refused, 401, "SVC-GW-1003")
    assert "revoked" in body["message"]
    assert_envelope(read, 401, "SVC-GW-1003")
    assert _payments(a, transaction_id) == 0


def test_a_secret_changed_in_the_database_is_the_one_that_counts(pair: Pair) -> None:
    a, _ = pair
    _warm(a, OTHER_API_KEY, OTHER_SECRET_KEY)
    _update_key(a, OTHER_API_KEY, secret_key="sk_test_rotated_" + "x" * 24)
    with signed_client(a.base_url, OTHER_API_KEY, OTHER_SECRET_KEY) as old:
        refused, transaction_id = _charge(old)
    with signed_client(a.base_url, OTHER_API_KEY, "sk_test_rotated_" + "x" * 24) as new:
        accepted, _ = _charge(new)
    assert_envelope(refused, 401, "SVC-GW-1002")
    assert _payments(a, transaction_id) == 0
    assert accepted.status_code == 201, accepted.text  # not refused by the kept secret


def test_a_rate_limit_set_through_another_worker_binds_the_next_charges(pair: Pair) -> None:
    a, b = pair
    _warm(a, DEFAULT_API_KEY, DEFAULT_SECRET_KEY)
    with signed_client(b.base_url) as client:
        limited = client.post("/sandbox/rate-limit", json={"perSecond": 0.001, "burst": 2})
    assert limited.status_code == 200, limited.text
    with signed_client(a.base_url) as client:
        statuses = [_charge(client)[0].status_code for _ in range(4)]
    assert statuses == [201, 201, 429, 429]


def test_a_key_moved_to_another_merchant_charges_for_that_merchant(pair: Pair) -> None:
    a, _ = pair
    _warm(a, OTHER_API_KEY, OTHER_SECRET_KEY)
    with a.sandbox.db.read() as conn:
        k = tables.api_keys
        demo = conn.execute(
            sa.select(k.c.merchant_id, k.c.store_id).where(k.c.api_key == DEFAULT_API_KEY)
        ).one()
    _update_key(a, OTHER_API_KEY, merchant_id=demo.merchant_id, store_id=demo.store_id)
    with signed_client(a.base_url, OTHER_API_KEY, OTHER_SECRET_KEY) as client:
        response, transaction_id = _charge(client)
    assert response.status_code == 201, response.text
    p = payments_table
    with a.sandbox.db.read() as conn:
        owner = conn.execute(
            sa.select(p.c.merchant_id).where(p.c.transaction_id == transaction_id)
        ).scalar_one()
    assert owner == demo.merchant_id


def test_a_request_authenticated_again_takes_one_rate_limit_token(pair: Pair) -> None:
    """A stale guess found by the charge's own transaction has the request authenticated
    afresh on the new row (`Caller.settle`), each check it passed asked again; its
    rate-limit token, under a limit that did not change, is taken once: with a burst of
    3, the warm-up and two charges go through."""
    a, b = pair
    with signed_client(b.base_url) as client:
        limited = client.post("/sandbox/rate-limit", json={"perSecond": 0.001, "burst": 3})
    assert limited.status_code == 200, limited.text
    _warm(a, DEFAULT_API_KEY, DEFAULT_SECRET_KEY)  # one token; A keeps the key's record
    m = tables.merchants
    engine = sa.create_engine(a.config.db_url, poolclass=sa.pool.NullPool)
    try:
        with engine.begin() as conn:  # behind A's back: its kept record is now stale
            conn.execute(sa.update(m).where(m.c.id == a_merchant(a)).values(latency_ms=1))
    finally:
        engine.dispose()
    with signed_client(a.base_url) as client:
        statuses = [_charge(client)[0].status_code for _ in range(3)]
    assert statuses == [201, 201, 429]


def a_merchant(server: SandboxServer) -> str:
    """The demo key's merchant."""
    k = tables.api_keys
    with server.sandbox.db.read() as conn:
        query = sa.select(k.c.merchant_id).where(k.c.api_key == DEFAULT_API_KEY)
        return str(conn.execute(query).scalar_one())


@pytest.fixture(params=["rate-limited", "unlimited"])
def limited_pair(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Pair]:
    """`pair`, with the per-key rate limit on (its buckets are rows naming the merchant)
    or off (the stale guess is then first found by the charge's own transaction)."""
    rate = 200.0 if request.param == "rate-limited" else 0.0
    with database_url("postgres", tmp_path) as url:
        config = SandboxConfig(
            db_url=url, run_reconciler_in_background=False, workers=2, rate_limit_per_second=rate
        )
        with SandboxServer(config) as first, SandboxServer(config) as second:
            yield first, second


def test_a_merchant_deleted_through_another_worker_is_refused_never_failed(
    limited_pair: Pair,
) -> None:
    """A kept key whose merchant another worker deleted: every request on it is refused
    as a key of no merchant (401), never answered with a 500, and leaves nothing."""
    a, b = limited_pair
    made = httpx2.post(f"{b.base_url}/sandbox/merchants", json={"name": "gone soon"}).json()
    _warm(a, made["apiKey"], made["secretKey"])
    with signed_client(b.base_url, made["apiKey"], made["secretKey"]) as client:
        deleted = client.delete(f"/sandbox/merchants/{made['merchantId']}")
    assert deleted.status_code == 200, deleted.text
    with signed_client(a.base_url, made["apiKey"], made["secretKey"]) as client:
        refused, transaction_id = _charge(client)
        read = client.get("/v1/payments/pay_nope")
        control = client.post("/sandbox/latency", json={"milliseconds": 0})
    for answer in (refused, read, control):
        body = assert_envelope(answer, 401, "SVC-GW-1003")
        assert "not a key of this environment" in body["message"]
    assert _payments(a, transaction_id) == 0


def test_a_request_refused_on_a_rotated_secret_takes_one_rate_limit_token(pair: Pair) -> None:
    """A kept key's secret changed behind the worker's back: the request signed with the
    old secret passed the edge on the guess (one token), is refused once its transaction
    finds the new row (401), and is never counted again; the new secret then has the
    rest of the burst of 3."""
    a, b = pair
    with signed_client(b.base_url, OTHER_API_KEY, OTHER_SECRET_KEY) as client:
        limited = client.post("/sandbox/rate-limit", json={"perSecond": 0.001, "burst": 3})
    assert limited.status_code == 200, limited.text
    _warm(a, OTHER_API_KEY, OTHER_SECRET_KEY)  # the first token; A keeps the record
    rotated = "sk_test_rotated_" + "y" * 24
    _update_key(a, OTHER_API_KEY, secret_key=rotated)
    with signed_client(a.base_url, OTHER_API_KEY, OTHER_SECRET_KEY) as old:
        refused, transaction_id = _charge(old)
    with signed_client(a.base_url, OTHER_API_KEY, rotated) as new:
        statuses = [_charge(new)[0].status_code for _ in range(2)]
    assert_envelope(refused, 401, "SVC-GW-1002")
    assert _payments(a, transaction_id) == 0
    assert statuses == [201, 429]
