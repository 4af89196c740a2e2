"""The transactionId fence answers the payment as it is now.

A repeated charge body (no Idempotency-Key) after a capture, a void, a refund or a
finished 3-D Secure challenge shows the current status, as ``GET /v1/payments/{id}``
would, in the charge-response shape; an Idempotency-Key replay stays byte-identical.
"""

from __future__ import annotations

import uuid
from typing import Any

import httpx2

from tests.sandbox.bodies import charge_body
from tests.sandbox.envelope import assert_envelope
from workbench.sandbox.cards import CHALLENGE_CODE

# The charge response's fields and the payment object's names for them.
_SAME_AS_GET = {
    "paymentId": "id",
    "status": "status",
    "amount": "amount",
    "currency": "currency",
    "commission": "commission",
    "netAmount": "netAmount",
    "cardMask": "cardMask",
    "cardBrand": "cardBrand",
    "cardType": "cardType",
    "installmentCount": "installmentCount",
    "threeDSecure": "threeDSecure",
    "createdAt": "createdAt",
    "completedAt": "completedAt",
}


def _charge(client: httpx2.Client, body: dict[str, Any], **kwargs: Any) -> httpx2.Response:
    response = client.post("/v1/payments/card", json=body, **kwargs)
    assert response.status_code == 201, response.text
    return response


def _repeat_matches_get(client: httpx2.Client, body: dict[str, Any]) -> dict[str, Any]:
    """The fence's answer to ``body`` again equals the payment as GET reports it now."""
    repeat = client.post("/v1/payments/card", json=body)
    assert repeat.status_code == 200, repeat.text
    answer = dict(repeat.json())
    current = client.get(f"/v1/payments/{answer['paymentId']}").json()
    assert {k: answer[k] for k in _SAME_AS_GET} == {k: current[v] for k, v in _SAME_AS_GET.items()}
    return answer


def test_repeat_after_capture_shows_captured(client: httpx2.Client) -> None:
    body = charge_body(capture=False, threeDSecure=False)
    first = _charge(client, body).json()
    assert first["status"] == "authorized"
    assert client.post(f"/v1/payments/{first['paymentId']}/capture", json={}).status_code == 200
    answer = _repeat_matches_get(client, body)
    assert answer["status"] == "captured"
    assert answer["authCode"] == first["authCode"]


def test_repeat_after_void_shows_voided(client: httpx2.Client) -> None:
    body = charge_body(capture=False, threeDSecure=False)
    first = _charge(client, body).json()
    assert client.post(f"/v1/payments/{first['paymentId']}/void", json={}).status_code == 200
    assert _repeat_matches_get(client, body)["status"] == "voided"


def test_repeat_after_capture_and_refund_matches_the_payment(client: httpx2.Client) -> None:
    body = charge_body(capture=False, threeDSecure=False)
    first = _charge(client, body).json()
    assert client.post(f"/v1/payments/{first['paymentId']}/capture", json={}).status_code == 200
    refund = client.post(f"/v1/payments/{first['paymentId']}/refund", json={"amount": 1_000})
    assert refund.status_code in (200, 202), refund.text
    assert _repeat_matches_get(client, body)["status"] == "captured"


def test_repeat_after_a_finished_challenge_does_not_send_back_to_the_acs(
    client: httpx2.Client, anon: httpx2.Client
) -> None:
    body = charge_body("tok_test_3ds_challenge")
    first = _charge(client, body).json()
    assert first["status"] == "pending_3ds"
    pending = _repeat_matches_get(client, body)
    assert pending["acsUrl"] == first["acsUrl"]
    assert pending["correlationId"] == first["correlationId"]
    answer = anon.post(
        f"/sandbox/acs/{first['paymentId']}",
        json={"correlationId": first["correlationId"], "code": CHALLENGE_CODE},
    ).json()
    done = client.post(
        f"/v1/payments/{first['paymentId']}/3ds-callback",
        json={"pares": answer["pares"], "correlationId": first["correlationId"]},
    )
    assert done.status_code == 200, done.text
    after = _repeat_matches_get(client, body)
    assert after["status"] == "captured"
    assert "acsUrl" not in after
    assert "correlationId" not in after
    assert after["authCode"] == done.json()["authCode"]


def test_repeat_of_a_failed_challenge_answers_the_failure(
    client: httpx2.Client, anon: httpx2.Client
) -> None:
    body = charge_body("tok_test_3ds_challenge")
    first = _charge(client, body).json()
    answer = anon.post(
        f"/sandbox/acs/{first['paymentId']}",
        json={"correlationId": first["correlationId"], "code": "000000"},
    ).json()
    client.post(
        f"/v1/payments/{first['paymentId']}/3ds-callback",
        json={"pares": answer["pares"], "correlationId": first["correlationId"]},
    )
    repeat = client.post("/v1/payments/card", json=body)
    assert 400 <= repeat.status_code < 500
    assert assert_envelope(repeat, repeat.status_code, "SVC-PAY-3003")


def test_repeat_of_a_decline_carries_its_own_request_id(client: httpx2.Client) -> None:
    body = charge_body("tok_test_declined")
    first = client.post("/v1/payments/card", json=body)
    repeat = client.post("/v1/payments/card", json=body)
    assert repeat.status_code == first.status_code
    envelope = assert_envelope(repeat, first.status_code, "SVC-PAY-3001")
    assert envelope["requestId"] == repeat.headers["X-Request-Id"]
    assert envelope["requestId"] != first.json()["requestId"]


def test_an_idempotency_key_replay_stays_byte_identical(client: httpx2.Client) -> None:
    key = {"Idempotency-Key": str(uuid.uuid4())}
    body = charge_body(capture=False, threeDSecure=False)
    first = _charge(client, body, headers=key)
    payment_id = first.json()["paymentId"]
    assert client.post(f"/v1/payments/{payment_id}/capture", json={}).status_code == 200
    replay = client.post("/v1/payments/card", json=body, headers=key)
    assert replay.status_code == 201
    assert replay.content == first.content
    assert replay.headers["X-Request-Id"] == first.headers["X-Request-Id"]
    assert replay.json()["status"] == "authorized"
    # Without the key, the fence reports the payment as it is now.
    assert _repeat_matches_get(client, body)["status"] == "captured"
