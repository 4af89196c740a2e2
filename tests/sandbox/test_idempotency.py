"""Idempotency: verbatim replay, payload conflicts, the transactionId fence, concurrency."""

from __future__ import annotations

import json
import uuid
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta

import httpx2
import sqlalchemy as sa

from tests.sandbox.bodies import charge_body
from tests.sandbox.clients import signed_client
from tests.sandbox.envelope import assert_envelope
from workbench.config import DEFAULT_API_KEY
from workbench.sandbox import SandboxServer, tables
from workbench.sandbox.fixtures import DEMO_MERCHANT_ID
from workbench.sandbox.idempotency import fingerprint
from workbench.sandbox.payments.models import ChargeRequest


def test_same_key_same_payload_returns_original_status_body_and_request_id(
    client: httpx2.Client,
) -> None:
    key = str(uuid.uuid4())
    body = charge_body()
    first = client.post("/v1/payments/card", json=body, headers={"Idempotency-Key": key})
    second = client.post("/v1/payments/card", json=body, headers={"Idempotency-Key": key})
    assert first.status_code == second.status_code == 201
    assert second.content == first.content
    assert second.headers["X-Request-Id"] == first.headers["X-Request-Id"]


def test_same_key_different_payload_is_409_2001(client: httpx2.Client) -> None:
    key = str(uuid.uuid4())
    body = charge_body()
    client.post("/v1/payments/card", json=body, headers={"Idempotency-Key": key})
    changed = {**body, "amount": body["amount"] + 1}
    response = client.post("/v1/payments/card", json=changed, headers={"Idempotency-Key": key})
    assert_envelope(response, 409, "SVC-GW-2001")


def test_keys_are_scoped_per_endpoint(client: httpx2.Client) -> None:
    key = str(uuid.uuid4())
    first = client.post(
        "/v1/payments/card", json=charge_body(capture=False), headers={"Idempotency-Key": key}
    ).json()
    second = client.post("/v1/payments/card", json=charge_body(capture=False)).json()
    for pid in (first["paymentId"], second["paymentId"]):
        response = client.post(
            f"/v1/payments/{pid}/capture", json={}, headers={"Idempotency-Key": key}
        )
        assert response.status_code == 200
        assert response.json()["id"] == pid


def test_transaction_id_fences_a_charge_without_the_header(client: httpx2.Client) -> None:
    body = charge_body()
    first = client.post("/v1/payments/card", json=body)
    second = client.post("/v1/payments/card", json=body)
    assert first.status_code == 201
    assert second.status_code == 200
    assert second.json() == first.json()


def test_transaction_id_reused_with_other_payload_is_409_2001(client: httpx2.Client) -> None:
    body = charge_body()
    client.post("/v1/payments/card", json=body)
    response = client.post("/v1/payments/card", json={**body, "amount": 20_000})
    assert_envelope(response, 409, "SVC-GW-2001")


def test_a_declined_charge_is_replayed_not_recharged(client: httpx2.Client) -> None:
    body = charge_body(token="tok_test_declined")
    key = {"Idempotency-Key": str(uuid.uuid4())}
    first = client.post("/v1/payments/card", json=body, headers=key)
    second = client.post("/v1/payments/card", json=body, headers=key)
    assert first.status_code == second.status_code == 400
    assert first.content == second.content


def test_nothing_is_cached_for_a_request_that_failed_validation(client: httpx2.Client) -> None:
    key = {"Idempotency-Key": str(uuid.uuid4())}
    body = charge_body()
    bad = client.post("/v1/payments/card", json={**body, "amount": "100"}, headers=key)
    assert_envelope(bad, 400, "SVC-VAL-4001")
    good = client.post("/v1/payments/card", json=body, headers=key)
    assert good.status_code == 201


def test_nothing_is_cached_for_a_request_that_failed_authentication(
    server: SandboxServer, client: httpx2.Client
) -> None:
    key = {"Idempotency-Key": str(uuid.uuid4())}
    body = charge_body()
    with signed_client(server.base_url, secret_key="sk_test_wrong") as wrong:
        assert_envelope(wrong.post("/v1/payments/card", json=body, headers=key), 401, "SVC-GW-1002")
    assert client.post("/v1/payments/card", json=body, headers=key).status_code == 201


def _concurrently(server: SandboxServer, count: int, send: object) -> list[httpx2.Response]:
    def one(_: int) -> httpx2.Response:
        with signed_client(server.base_url) as c:
            return send(c)  # type: ignore[operator, no-any-return]

    with ThreadPoolExecutor(max_workers=count) as pool:
        return list(pool.map(one, range(count)))


def test_50_concurrent_identical_requests_create_exactly_one_payment(
    server: SandboxServer, client: httpx2.Client
) -> None:
    body = charge_body()
    key = {"Idempotency-Key": str(uuid.uuid4())}
    responses = _concurrently(
        server, 50, lambda c: c.post("/v1/payments/card", json=body, headers=key)
    )
    statuses = [r.status_code for r in responses]
    assert 500 not in statuses
    created = [r for r in responses if r.status_code == 201]
    assert created, statuses
    assert {r.json()["paymentId"] for r in created} == {created[0].json()["paymentId"]}
    for r in responses:
        if r.status_code == 409:
            assert r.json()["code"] == "SVC-GW-2002"
        else:
            assert r.status_code == 201
            assert r.content == created[0].content
    events = client.get("/sandbox/events", params={"type": "payment.captured"}).json()["items"]
    mine = [e for e in events if e["data"]["transactionId"] == body["transactionId"]]
    assert len(mine) == 1


def test_50_concurrent_charges_with_one_transaction_id_create_one_payment(
    server: SandboxServer, client: httpx2.Client
) -> None:
    body = charge_body()
    responses = _concurrently(server, 50, lambda c: c.post("/v1/payments/card", json=body))
    assert sorted({r.status_code for r in responses}) in ([200, 201], [201])
    assert len({r.json()["paymentId"] for r in responses}) == 1


def test_concurrent_refunds_never_exceed_the_captured_amount(
    server: SandboxServer, client: httpx2.Client
) -> None:
    pid = client.post("/v1/payments/card", json=charge_body(amount=10_000)).json()["paymentId"]
    responses = _concurrently(
        server, 20, lambda c: c.post(f"/v1/payments/{pid}/refund", json={"amount": 1500})
    )
    ok = [r for r in responses if r.status_code == 200]
    assert len(ok) == 6  # 6 x 1,500 <= 10,000 < 7 x 1,500
    for r in responses:
        if r.status_code != 200:
            assert r.json()["code"] in ("SVC-PAY-4002", "SVC-GW-2002"), r.text
    payment = client.get(f"/v1/payments/{pid}").json()
    assert payment["refundAmount"] == 9000
    assert payment["refundableAmount"] == 1000


def test_concurrent_in_flight_refunds_count_against_refundable(
    server: SandboxServer, client: httpx2.Client
) -> None:
    body = charge_body(token="tok_test_refund_async", amount=5000)
    pid = client.post("/v1/payments/card", json=body).json()["paymentId"]
    responses = _concurrently(
        server, 10, lambda c: c.post(f"/v1/payments/{pid}/refund", json={"amount": 2000})
    )
    assert sorted(r.status_code for r in responses).count(202) == 2
    assert client.get(f"/v1/payments/{pid}").json()["refundableAmount"] == 1000


def test_a_record_left_pending_is_409_2002_until_its_claim_lapses(
    server: SandboxServer, client: httpx2.Client
) -> None:
    # What a sandbox of an earlier version left when it stopped mid-request.
    body = charge_body()
    content = json.dumps(body).encode()
    key = str(uuid.uuid4())
    now = datetime.now(UTC)
    records = tables.idempotency_records
    with server.sandbox.db.write() as conn:
        conn.execute(
            sa.insert(records).values(
                api_key=DEFAULT_API_KEY,
                endpoint="POST /v1/payments/card",
                key=key,
                merchant_id=DEMO_MERCHANT_ID,
                fingerprint=fingerprint(ChargeRequest.model_validate(body)),
                state="pending",
                locked_until=now + timedelta(seconds=60),
                created_at=now,
                expires_at=now + timedelta(hours=24),
            )
        )
    headers = {"Idempotency-Key": key, "Content-Type": "application/json"}
    waiting = client.post("/v1/payments/card", content=content, headers=headers)
    assert_envelope(waiting, 409, "SVC-GW-2002")
    assert waiting.headers["Retry-After"] == "1"
    with server.sandbox.db.write() as conn:
        conn.execute(sa.update(records).where(records.c.key == key).values(locked_until=now))
    taken_over = client.post("/v1/payments/card", content=content, headers=headers)
    assert taken_over.status_code == 201, taken_over.text
    replay = client.post("/v1/payments/card", content=content, headers=headers)
    assert replay.content == taken_over.content
    assert replay.headers["Idempotent-Replayed"] == "true"
