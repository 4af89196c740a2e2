"""Checkout sessions: modes, minimum amount, splits, checkoutUrl, fence, expiry."""

from __future__ import annotations

import uuid
from typing import Any

import httpx2
import pytest

from tests.sandbox.bodies import txn
from tests.sandbox.envelope import assert_envelope
from workbench.sandbox import SandboxServer
from workbench.spec import limits


def session_body(**extra: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "transactionId": txn(),
        "amount": 25_000,
        "currency": "TRY",
        "returnUrl": "https://shop.example/return",
    }
    body.update(extra)
    return {k: v for k, v in body.items() if v is not None}


def test_session_is_created_active_with_checkout_url(
    client: httpx2.Client, server: SandboxServer
) -> None:
    response = client.post("/v1/payments/sessions", json=session_body(description="Order 42"))
    assert response.status_code == 201
    body = response.json()
    assert set(body) == {
        "sessionId",
        "checkoutUrl",
        "expiresAt",
        "merchantId",
        "amount",
        "currency",
        "status",
    }
    assert uuid.UUID(body["sessionId"])
    assert body["status"] == "active"
    assert body["checkoutUrl"] == f"{server.base_url}/checkout/{body['sessionId']}"
    assert body["merchantId"].startswith("mrc_")


@pytest.mark.parametrize("mode", ["payment", "qr"])
def test_minimum_amount_is_100_kurus(client: httpx2.Client, mode: str) -> None:
    assert (
        client.post("/v1/payments/sessions", json=session_body(amount=100, mode=mode)).status_code
        == 201
    )
    response = client.post("/v1/payments/sessions", json=session_body(amount=99, mode=mode))
    assert "amount" in assert_envelope(response, 400, "SVC-VAL-4001")["message"]


def test_amount_required_in_payment_mode(client: httpx2.Client) -> None:
    response = client.post("/v1/payments/sessions", json=session_body(amount=None))
    assert "amount" in assert_envelope(response, 400, "SVC-VAL-4001")["message"]


def test_card_update_only_omits_amount(client: httpx2.Client) -> None:
    body = session_body(amount=None, mode="card_update_only", customerId="cus_demo_ayse")
    assert client.post("/v1/payments/sessions", json=body).status_code == 201
    body = session_body(mode="card_update_only", customerId="cus_demo_ayse")
    assert_envelope(client.post("/v1/payments/sessions", json=body), 400, "SVC-VAL-4001")


def test_splits_summing_to_at_most_amount_are_accepted(client: httpx2.Client) -> None:
    splits = [
        {"submerchantId": "smr_1", "amountMinor": 10_000},
        {"submerchantId": "smr_2", "amountMinor": 15_000},
    ]
    assert client.post("/v1/payments/sessions", json=session_body(splits=splits)).status_code == 201


def test_splits_over_amount_are_rejected(client: httpx2.Client) -> None:
    splits = [{"submerchantId": "smr_1", "amountMinor": 25_001}]
    response = client.post("/v1/payments/sessions", json=session_body(splits=splits))
    assert "splits" in assert_envelope(response, 400, "SVC-VAL-4001")["message"]


def test_splits_only_in_payment_mode(client: httpx2.Client) -> None:
    splits = [{"submerchantId": "smr_1", "amountMinor": 100}]
    response = client.post("/v1/payments/sessions", json=session_body(mode="qr", splits=splits))
    assert "splits" in assert_envelope(response, 400, "SVC-VAL-4001")["message"]


def test_currency_must_be_try(client: httpx2.Client) -> None:
    response = client.post("/v1/payments/sessions", json=session_body(currency="EUR"))
    assert "currency" in assert_envelope(response, 400, "SVC-VAL-4001")["message"]


def test_return_url_is_required(client: httpx2.Client) -> None:
    body = session_body()
    del body["returnUrl"]
    response = client.post("/v1/payments/sessions", json=body)
    assert "returnUrl" in assert_envelope(response, 400, "SVC-VAL-4001")["message"]


def test_transaction_id_fences_session_creation(client: httpx2.Client) -> None:
    body = session_body()
    first = client.post("/v1/payments/sessions", json=body)
    second = client.post("/v1/payments/sessions", json=body)
    assert (first.status_code, second.status_code) == (201, 200)
    assert first.json() == second.json()
    other = client.post("/v1/payments/sessions", json={**body, "amount": 30_000})
    assert_envelope(other, 409, "SVC-GW-2001")


def test_session_expires_after_its_lifetime(client: httpx2.Client) -> None:
    client.post("/sandbox/reconciler/tick", json={})
    body = client.post("/v1/payments/sessions", json=session_body()).json()
    client.post("/sandbox/clock/advance", json={"seconds": limits.SESSION_LIFETIME_SECONDS + 1})
    expired = client.get("/sandbox/events", params={"type": "session.expired"}).json()["items"]
    assert body["sessionId"] in {e["data"]["sessionId"] for e in expired}
