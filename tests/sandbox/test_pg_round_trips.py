"""PostgreSQL team mode: round trips per charge, the pool per worker count, idle pings.

Round trips are counted from libpq's own protocol trace of every pooled connection
(one ``ReadyForQuery`` from the server ends each), never from timings.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from tests.postgres import database_url
from tests.sandbox.bodies import charge_body
from tests.sandbox.clients import signed_client
from tests.sandbox.pgtrace import Trace
from workbench.sandbox import SandboxConfig, SandboxServer, tables
from workbench.sandbox.payments.tables import payments as payments_table
from workbench.sandbox.storage import Database, pool_settings
from workbench.sandbox.storage import postgres as pg_backend


@pytest.fixture
def pg_url(tmp_path: Path) -> Iterator[str]:
    with database_url("postgres", tmp_path) as url:
        yield url


def _charges(client: Any, count: int, *, key: bool) -> list[dict[str, Any]]:
    answers = []
    for _ in range(count):
        headers = {"Idempotency-Key": str(uuid.uuid4())} if key else {}
        response = client.post("/v1/payments/card", json=charge_body(), headers=headers)
        assert response.status_code == 201, response.text
        answers.append(response.json())
    return answers


def _counted(pg_url: str, **limits: float) -> SandboxConfig:
    """Two workers whose round trips are counted: no reconciler, no rate limit unless
    ``limits`` sets one, and the request log off (its writer's batches are round trips
    of their own, after the answers)."""
    settings: dict[str, Any] = {"rate_limit_per_second": 0, **limits}
    return SandboxConfig(
        db_url=pg_url,
        run_reconciler_in_background=False,
        workers=2,
        request_log_size=0,
        **settings,
    )


@pytest.mark.parametrize("key", [True, False], ids=["idempotency-key", "no-key"])
def test_a_signed_charge_takes_two_round_trips_on_postgres(
    pg_url: str, tmp_path: Path, key: bool
) -> None:
    # Before: 14 (a ping, BEGIN, SELECT, COMMIT for the key; a ping, BEGIN, seven
    # statements and COMMIT for the charge), then 3 (the key; BEGIN and the reads; the
    # INSERTs and COMMIT). Now the kept key record is confirmed by a read that goes with
    # the charge's, unlocked, and the INSERTs are one statement. Rate limit off, as in
    # the benchmark.
    config = _counted(pg_url)
    with SandboxServer(config) as server, signed_client(server.base_url) as client:
        _charges(client, 3, key=key)
        trace = Trace(server.sandbox.db.engine, tmp_path / "libpq.trace")
        answers = _charges(client, 20, key=key)  # sequential: the pool is idle after each
        trips = trace.round_trips()
        # Everything a charge writes is there, once each.
        with server.sandbox.db.read() as conn:
            ids = [a["paymentId"] for a in answers]
            p, e = payments_table, tables.events
            stored = conn.execute(sa.select(sa.func.count()).where(p.c.id.in_(ids))).scalar()
            captured = sa.select(sa.func.count()).where(e.c.type == "payment.captured")
            emitted = conn.execute(captured).scalar()
            records = conn.execute(
                sa.select(sa.func.count()).select_from(tables.idempotency_records)
            ).scalar()
    assert stored == 20
    assert emitted == 23
    assert records == (23 if key else 0)
    # Two per charge, and a one-off or two (psycopg preparing a statement it has now
    # seen five times on that connection).
    assert 2 * 20 <= trips <= 2 * 20 + 2, f"{trips / 20:.2f} round trips per charge"


def test_a_rate_limited_charge_takes_one_more_round_trip_on_postgres(
    pg_url: str, tmp_path: Path
) -> None:
    # Before: 6.2 per charge (the bucket's own transaction: BEGIN with its locked read,
    # the UPDATE, COMMIT, besides the charge's two), now one statement in autocommit.
    config = _counted(pg_url, rate_limit_per_second=10_000, rate_limit_burst=10_000)
    with SandboxServer(config) as server, signed_client(server.base_url) as client:
        _charges(client, 3, key=False)
        trace = Trace(server.sandbox.db.engine, tmp_path / "libpq.trace")
        _charges(client, 20, key=False)
        trips = trace.round_trips()
    # Three per charge, and a few one-offs (psycopg preparing statements it has now seen
    # five times on a connection: the bucket's statement is one more of those).
    assert 3 * 20 <= trips <= 3 * 20 + 4, f"{trips / 20:.2f} round trips per charge"


def test_a_replayed_charge_answers_from_its_record_on_postgres(pg_url: str) -> None:
    config = SandboxConfig(db_url=pg_url, run_reconciler_in_background=False, workers=2)
    with SandboxServer(config) as server, signed_client(server.base_url) as client:
        body, headers = charge_body(), {"Idempotency-Key": str(uuid.uuid4())}
        first = client.post("/v1/payments/card", json=body, headers=headers)
        again = client.post("/v1/payments/card", json=body, headers=headers)
        fenced = client.post("/v1/payments/card", json=body)  # no key: the fence answers
        other = client.post(
            "/v1/payments/card", json={**body, "amount": body["amount"] + 1}, headers=headers
        )
    assert first.status_code == 201
    assert again.status_code == 201
    assert again.content == first.content
    assert again.headers["Idempotent-Replayed"] == "true"
    assert fenced.status_code == 200
    assert json.loads(fenced.content)["paymentId"] == first.json()["paymentId"]
    assert other.json()["code"] == "SVC-GW-2001"


@pytest.mark.parametrize("workers", [1, 2, 3, 4, 8, 16, 32, 64])
@pytest.mark.parametrize("max_connections", [50, 100, 500])
def test_pool_settings_fit_the_server_for_every_worker_count(
    workers: int, max_connections: int
) -> None:
    if workers * 2 > max_connections - 13:  # not even two connections each
        with pytest.raises(ValueError, match="max_connections"):
            pool_settings(workers, max_connections)
        return
    settings = pool_settings(workers, max_connections)
    per_worker = settings["pool_size"] + settings["max_overflow"]
    assert 2 <= settings["pool_size"] <= 10
    assert settings["max_overflow"] >= 0
    assert per_worker <= 40  # one per thread of anyio's pool, no more
    assert workers * per_worker <= max_connections - 13  # room for psql and the rest


def test_pool_settings_refuse_a_server_too_small_for_the_workers() -> None:
    with pytest.raises(ValueError, match="max_connections"):
        pool_settings(50, 100)
    with pytest.raises(ValueError, match="at least 1"):
        pool_settings(0)


def test_a_postgres_database_sizes_its_pool_for_its_workers(pg_url: str) -> None:
    databases = [Database(pg_url, workers=n) for n in (1, 4, 8)]
    try:
        with databases[0].read() as conn:
            limit = int(conn.exec_driver_sql("SHOW max_connections").scalar_one())
        for n, database in zip((1, 4, 8), databases, strict=True):
            pool: Any = database.engine.pool
            expected = pool_settings(n, limit)
            assert (pool.size(), pool._max_overflow) == (
                expected["pool_size"],
                expected["max_overflow"],
            )
    finally:
        for database in databases:
            database.dispose()


def _backend_pid(database: Database) -> int:
    with database.read() as conn:
        return int(conn.exec_driver_sql("SELECT pg_backend_pid()").scalar_one())


def _kill(pg_url: str, pid: int) -> None:
    admin = sa.create_engine(pg_url, poolclass=sa.pool.NullPool)
    with admin.connect() as conn:
        assert conn.exec_driver_sql(f"SELECT pg_terminate_backend({pid})").scalar_one()
    admin.dispose()


def test_an_idle_connection_the_server_dropped_is_replaced_before_use(
    pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    database = Database(pg_url)
    try:
        dead = _backend_pid(database)
        _kill(pg_url, dead)
        monkeypatch.setattr(pg_backend, "PING_AFTER_IDLE_SECONDS", 0.0)  # "it sat idle"
        assert _backend_pid(database) != dead  # pinged, found dead, replaced: no error
    finally:
        database.dispose()


def test_a_connection_in_steady_use_is_not_pinged(
    pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    database = Database(pg_url)
    try:
        dead = _backend_pid(database)
        _kill(pg_url, dead)
        monkeypatch.setattr(pg_backend, "PING_AFTER_IDLE_SECONDS", 3600.0)  # "just used"
        with pytest.raises(sa.exc.OperationalError):  # no ping: the dead one is used
            _backend_pid(database)
        assert _backend_pid(database) != dead  # and the pool replaced it afterwards
    finally:
        database.dispose()


def test_a_charge_with_a_malformed_key_is_refused_before_its_transaction_on_postgres(
    pg_url: str, tmp_path: Path
) -> None:
    # The key is checked before any database work, as on every idempotent POST: what is
    # left is the caller's key confirmation (a kept record is a guess on PostgreSQL),
    # never the charge's transaction (before: BEGIN and its reads, then a ROLLBACK).
    config = _counted(pg_url)
    with SandboxServer(config) as server, signed_client(server.base_url) as client:
        _charges(client, 3, key=True)
        trace = Trace(server.sandbox.db.engine, tmp_path / "libpq.trace")
        for _ in range(10):
            headers = {"Idempotency-Key": "order-42"}
            refused = client.post("/v1/payments/card", json=charge_body(), headers=headers)
            assert refused.status_code == 400, refused.text
            assert refused.json()["code"] == "SVC-GW-4000"
        trips = trace.round_trips()
    # One each (main: 2.2), and a one-off or two (psycopg preparing a statement).
    assert trips <= 10 + 2, f"{trips / 10:.2f} round trips per refused charge"


def test_a_capture_confirms_its_key_on_the_door_s_read_plan_on_postgres(
    pg_url: str, tmp_path: Path
) -> None:
    # Every idempotent POST goes through one door: the caller's kept key record is
    # confirmed by a read that travels with the transaction's first statement, as the
    # card charge's is, instead of a round trip of its own before the route.
    config = _counted(pg_url)
    with SandboxServer(config) as server, signed_client(server.base_url) as client:
        ids = []
        for _ in range(13):
            response = client.post("/v1/payments/card", json=charge_body(capture=False))
            assert response.status_code == 201, response.text
            ids.append(response.json()["paymentId"])
        for pid in ids[:3]:
            headers = {"Idempotency-Key": str(uuid.uuid4())}
            client.post(f"/v1/payments/{pid}/capture", json={}, headers=headers)
        trace = Trace(server.sandbox.db.engine, tmp_path / "libpq.trace")
        for pid in ids[3:]:
            headers = {"Idempotency-Key": str(uuid.uuid4())}
            captured = client.post(f"/v1/payments/{pid}/capture", json={}, headers=headers)
            assert captured.status_code == 200, captured.text
        trips = trace.round_trips()
    # 11.5 each (main: 12.6, the confirmation's own round trip before the route).
    assert trips <= 12 * 10, f"{trips / 10:.2f} round trips per capture"
