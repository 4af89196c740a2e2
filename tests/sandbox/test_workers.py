"""``workbench sandbox --workers 2`` on an SQLite file and on PostgreSQL: one sandbox.

Every request below opens a connection of its own, so the kernel spreads them over
both worker processes; whatever the spread, the rules must hold as for one process.
On SQLite the workers also take turns at the file's write lock and share the API-key
cache's stamp: a control route answered by one worker must bind the other at once.
"""

from __future__ import annotations

import uuid
from concurrent.futures import ThreadPoolExecutor

import httpx2
import sqlalchemy as sa

from tests.sandbox.bodies import charge_body
from tests.sandbox.clients import signed_client
from tests.sandbox.envelope import assert_envelope
from tests.sandbox.workers import LOGS
from tests.sandbox.workers import children as _children
from workbench.sandbox import tables
from workbench.sandbox.payments.tables import payments as payments_table

#: The ``workers`` fixture starts this module's SQLite sandbox under CPU load, each worker
#: slower to start than uvicorn's default health-check timeout (`tests.sandbox.workers`).
#: One backend is enough: the health check is the same whatever the database, and each
#: loaded start keeps every core spinning for 8 s, which the other tests wait behind.
START_UNDER_LOAD = "sqlite"


def test_two_worker_processes_serve_one_port(workers: tuple[str, str, int]) -> None:
    base, _, pid = workers
    assert len(_children(pid)) >= 2
    with signed_client(base) as client:
        assert client.get("/sandbox/fixtures").status_code == 200


def test_both_workers_came_up_without_a_restart(workers: tuple[str, str, int]) -> None:
    """On SQLite they started under load (`START_UNDER_LOAD`), on PostgreSQL as usual."""
    text = LOGS[workers[0]].read_text("utf-8", "replace")
    assert text.count("Started server process") == 2, text
    assert text.count("Application startup complete") == 2, text
    assert "died" not in text, text


def test_a_rate_limit_is_counted_once_across_workers(workers: tuple[str, str, int]) -> None:
    base, _, _ = workers
    with signed_client(base) as client:
        client.post("/sandbox/rate-limit", json={"perSecond": 0.001, "burst": 4})
    try:
        statuses = []
        for _ in range(12):
            with signed_client(base) as fresh:
                statuses.append(fresh.get("/v1/payments/pay_nope").status_code)
        assert statuses == [404] * 4 + [429] * 8
        with signed_client(base) as fresh:
            assert_envelope(fresh.get("/v1/payments/pay_nope"), 429, "SVC-GW-1004")
    finally:
        with signed_client(base) as client:
            client.post("/sandbox/rate-limit", json={"perSecond": None})
    with signed_client(base) as fresh:
        assert fresh.get("/v1/payments/pay_nope").status_code == 404


def test_concurrent_duplicates_on_both_workers_make_one_payment(
    workers: tuple[str, str, int],
) -> None:
    base, url, _ = workers
    body = charge_body(threeDSecure=False)
    key = str(uuid.uuid4())

    def send(_: int) -> httpx2.Response:
        with signed_client(base) as fresh:
            return fresh.post("/v1/payments/card", json=body, headers={"Idempotency-Key": key})

    with ThreadPoolExecutor(max_workers=16) as pool:
        responses = list(pool.map(send, range(32)))
    created = [r for r in responses if r.status_code == 201]
    assert created, [r.text for r in responses]
    assert {r.json()["paymentId"] for r in created} == {created[0].json()["paymentId"]}
    for response in responses:
        if response.status_code != 201:
            assert_envelope(response, 409, "SVC-GW-2002")
    engine = sa.create_engine(url)
    try:
        with engine.connect() as conn:
            count = conn.execute(
                sa.select(sa.func.count())
                .select_from(payments_table)
                .where(payments_table.c.transaction_id == body["transactionId"])
            ).scalar_one()
    finally:
        engine.dispose()
    assert count == 1


def test_concurrent_distinct_charges_on_both_workers_are_all_stored(
    workers: tuple[str, str, int],
) -> None:
    base, url, _ = workers
    bodies = [charge_body(threeDSecure=False) for _ in range(120)]

    def send(body: dict[str, object]) -> httpx2.Response:
        with signed_client(base) as fresh:
            return fresh.post(
                "/v1/payments/card", json=body, headers={"Idempotency-Key": str(uuid.uuid4())}
            )

    with ThreadPoolExecutor(max_workers=16) as pool:
        responses = list(pool.map(send, bodies))
    assert [r.status_code for r in responses] == [201] * len(bodies), [
        r.text for r in responses if r.status_code != 201
    ]
    ids = {r.json()["paymentId"] for r in responses}
    assert len(ids) == len(bodies)
    engine = sa.create_engine(url)
    try:
        with engine.connect() as conn:
            stored = set(
                conn.execute(
                    sa.select(payments_table.c.id).where(payments_table.c.id.in_(ids))
                ).scalars()
            )
            records = conn.execute(
                sa.select(sa.func.count())
                .select_from(tables.idempotency_records)
                .where(tables.idempotency_records.c.status_code == 201)
            ).scalar_one()
    finally:
        engine.dispose()
    assert stored == ids
    assert records >= len(bodies)


def test_fail_next_fails_exactly_one_request_across_workers(
    workers: tuple[str, str, int],
) -> None:
    base, _, _ = workers
    with signed_client(base) as client:
        client.post("/sandbox/fail-next", json={"mode": "500"})
    statuses = []
    for _ in range(6):
        with signed_client(base) as fresh:
            statuses.append(fresh.get("/v1/payments/pay_nope").status_code)
    assert statuses == [500] + [404] * 5


def test_clock_advance_works_from_any_worker_while_reconcilers_run(
    workers: tuple[str, str, int],
) -> None:
    base, _, _ = workers
    with signed_client(base) as client:
        payment = client.post(
            "/v1/payments/card", json=charge_body("tok_test_refund_async", threeDSecure=False)
        ).json()
        refund = client.post(
            f"/v1/payments/{payment['paymentId']}/refund",
            json={"amount": 1_000},
            headers={"Idempotency-Key": str(uuid.uuid4())},
        )
        assert refund.status_code == 202, refund.text
    times = []
    for _ in range(6):
        with signed_client(base) as fresh:
            advanced = fresh.post("/sandbox/clock/advance", json={"seconds": 30})
            assert advanced.status_code == 200, advanced.text
            times.append(advanced.json()["businessTime"])
    assert times == sorted(times)
    assert len(set(times)) == len(times)
    with signed_client(base) as client:
        settled = client.get(f"/v1/payments/{payment['paymentId']}").json()
    assert settled["refundAmount"] == 1_000
