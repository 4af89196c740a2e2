"""Refunds: 200 settled, 202 in flight, the 202 retry rule, settlement by clock or control."""

from __future__ import annotations

import uuid

import httpx2

from tests.sandbox.bodies import charge_body


def _async_payment(client: httpx2.Client, amount: int = 10_000) -> str:
    body = charge_body(token="tok_test_refund_async", amount=amount)
    return str(client.post("/v1/payments/card", json=body).json()["paymentId"])


def test_full_refund_when_amount_is_omitted(client: httpx2.Client) -> None:
    pid = client.post("/v1/payments/card", json=charge_body()).json()["paymentId"]
    body = client.post(f"/v1/payments/{pid}/refund", json={}).json()
    assert body["refundAmount"] == 10_000
    assert body["refundableAmount"] == 0
    assert body["lastRefund"]["bankRefundId"]


def test_refund_reason_over_500_characters_is_truncated_not_rejected(client: httpx2.Client) -> None:
    pid = client.post("/v1/payments/card", json=charge_body()).json()["paymentId"]
    response = client.post(f"/v1/payments/{pid}/refund", json={"amount": 100, "reason": "x" * 600})
    assert response.status_code == 200


def test_in_flight_refund_counts_against_refundable_amount(client: httpx2.Client) -> None:
    pid = _async_payment(client)
    response = client.post(f"/v1/payments/{pid}/refund", json={"amount": 6000})
    assert response.status_code == 202
    payment = client.get(f"/v1/payments/{pid}").json()
    assert payment["refundAmount"] == 0
    assert payment["refundableAmount"] == 4000


def test_202_retry_with_same_key_reports_current_state_then_replays_final(
    client: httpx2.Client,
) -> None:
    pid = _async_payment(client)
    key = {"Idempotency-Key": str(uuid.uuid4())}
    first = client.post(f"/v1/payments/{pid}/refund", json={"amount": 3000}, headers=key)
    assert first.status_code == 202
    again = client.post(f"/v1/payments/{pid}/refund", json={"amount": 3000}, headers=key)
    assert again.status_code == 202
    assert again.json()["lastRefund"]["refundId"] == first.json()["lastRefund"]["refundId"]
    client.post("/v1/payments/card", json=charge_body())  # unrelated traffic
    assert client.post("/sandbox/settle", json={}).json()["settled"] >= 1
    final = client.post(f"/v1/payments/{pid}/refund", json={"amount": 3000}, headers=key)
    assert final.status_code == 200
    assert final.json()["lastRefund"]["status"] == "completed"
    assert final.json()["refundAmount"] == 3000
    replay = client.post(f"/v1/payments/{pid}/refund", json={"amount": 3000}, headers=key)
    assert replay.status_code == 200
    assert replay.content == final.content
    assert replay.headers["X-Request-Id"] == final.headers["X-Request-Id"]
    assert client.get(f"/v1/payments/{pid}").json()["refundAmount"] == 3000


def test_clock_advance_settles_in_flight_refund_exactly_once(client: httpx2.Client) -> None:
    pid = _async_payment(client)
    refund = client.post(f"/v1/payments/{pid}/refund", json={"amount": 2500}).json()
    rid = refund["lastRefund"]["refundId"]
    client.post("/sandbox/clock/advance", json={"seconds": 30})
    assert client.get(f"/v1/payments/{pid}").json()["refundAmount"] == 0
    moved = client.post("/sandbox/clock/advance", json={"seconds": 60}).json()
    assert moved["businessTime"].endswith("Z")
    client.post("/sandbox/clock/advance", json={"seconds": 600})
    client.post("/sandbox/reconciler/tick", json={})
    payment = client.get(f"/v1/payments/{pid}").json()
    assert payment["refundAmount"] == 2500
    assert payment["refundableAmount"] == 7500
    settled = client.get("/sandbox/events", params={"type": "refund.settled"}).json()["items"]
    assert len([e for e in settled if e["data"]["refundId"] == rid]) == 1


def test_tick_runs_settlement_when_due(client: httpx2.Client) -> None:
    pid = _async_payment(client)
    client.post(f"/v1/payments/{pid}/refund", json={"amount": 1000})
    assert client.post("/sandbox/reconciler/tick", json={}).json()["processed"]["refunds"] == 0
    client.post("/sandbox/clock/advance", json={"seconds": 61})
    assert client.get(f"/v1/payments/{pid}").json()["refundAmount"] == 1000
