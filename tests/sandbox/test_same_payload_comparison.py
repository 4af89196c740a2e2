"""One comparison of "the same payload" for every idempotency mechanism.

Idempotency-Key, the card charge's and the session's ``transactionId`` fences and the
buyer portal's keys all compare the request's meaning (its validated field values,
defaults applied), never its bytes: re-ordered keys and other whitespace are the same
payload, in both orders; another value is a different one.
"""

from __future__ import annotations

import json
import uuid
from typing import Any

import httpx2
import pytest

from tests.sandbox.bodies import charge_body, txn
from tests.sandbox.envelope import assert_envelope

JSON = {"Content-Type": "application/json"}


def _forward(body: dict[str, Any]) -> bytes:
    return json.dumps(body).encode()


def _backward(body: dict[str, Any]) -> bytes:
    """The same object with its keys in reverse order and other whitespace."""
    return json.dumps(dict(reversed(list(body.items()))), indent=2).encode()


ORDERS = pytest.mark.parametrize(
    ("first", "second"), [(_forward, _backward), (_backward, _forward)], ids=["fwd", "bwd"]
)


def _session_body() -> dict[str, Any]:
    return {
        "transactionId": txn(),
        "amount": 25_000,
        "currency": "TRY",
        "returnUrl": "https://shop.example/return",
        "description": "Sipariş 42",
    }


@ORDERS
@pytest.mark.parametrize("path", ["/v1/payments/card", "/v1/payments/sessions"])
def test_idempotency_key_replays_a_reordered_body(
    client: httpx2.Client, path: str, first: Any, second: Any
) -> None:
    body = charge_body(threeDSecure=False) if path.endswith("card") else _session_body()
    assert first(body) != second(body)
    headers = {**JSON, "Idempotency-Key": str(uuid.uuid4())}
    original = client.post(path, content=first(body), headers=headers)
    assert original.status_code == 201, original.text
    replay = client.post(path, content=second(body), headers=headers)
    assert replay.status_code == 201, replay.text
    assert replay.content == original.content
    assert replay.headers["Idempotent-Replayed"] == "true"
    assert replay.headers["X-Request-Id"] == original.headers["X-Request-Id"]


@ORDERS
@pytest.mark.parametrize("path", ["/v1/payments/card", "/v1/payments/sessions"])
def test_transaction_id_fence_accepts_a_reordered_body(
    client: httpx2.Client, path: str, first: Any, second: Any
) -> None:
    body = charge_body(threeDSecure=False) if path.endswith("card") else _session_body()
    original = client.post(path, content=first(body), headers=JSON)
    assert original.status_code == 201, original.text
    repeat = client.post(path, content=second(body), headers=JSON)
    assert repeat.status_code == 200, repeat.text
    name = "paymentId" if path.endswith("card") else "sessionId"
    assert repeat.json()[name] == original.json()[name]


@pytest.mark.parametrize("use_key", [True, False], ids=["key", "fence"])
def test_a_default_written_out_is_the_same_payload_on_both(
    client: httpx2.Client, use_key: bool
) -> None:
    implicit = charge_body(threeDSecure=False)
    explicit = {**implicit, "capture": True, "installmentCount": 1, "saveCard": False}
    headers = {"Idempotency-Key": str(uuid.uuid4())} if use_key else {}
    original = client.post("/v1/payments/card", json=implicit, headers=headers)
    assert original.status_code == 201, original.text
    again = client.post("/v1/payments/card", json=explicit, headers=headers)
    assert again.status_code == (201 if use_key else 200), again.text
    assert again.json()["paymentId"] == original.json()["paymentId"]


@pytest.mark.parametrize("use_key", [True, False], ids=["key", "fence"])
def test_another_value_is_another_payload_on_both(client: httpx2.Client, use_key: bool) -> None:
    body = charge_body(threeDSecure=False)
    headers = {"Idempotency-Key": str(uuid.uuid4())} if use_key else {}
    assert client.post("/v1/payments/card", json=body, headers=headers).status_code == 201
    other = client.post("/v1/payments/card", json={**body, "capture": False}, headers=headers)
    assert_envelope(other, 409, "SVC-GW-2001")
