"""Every row of the spec's payment state table, and the illegal transitions around it."""

from __future__ import annotations

import httpx2
import pytest

from tests.sandbox.bodies import charge_body
from tests.sandbox.envelope import assert_envelope
from workbench.spec import PAYMENT


def _charge(client: httpx2.Client, **extra: object) -> dict[str, object]:
    response = client.post("/v1/payments/card", json=charge_body(**extra))
    assert response.status_code == 201, response.text
    return dict(response.json())


def test_new_charge_with_capture_default_becomes_captured_with_commission(
    client: httpx2.Client,
) -> None:
    body = _charge(client)
    assert body["status"] == "captured"
    assert body["commission"] == 249  # 2.49 % of 10,000 kuruş
    assert body["netAmount"] == 10_000 - 249
    assert body["cardMask"] == "424242******4242"
    assert str(body["paymentId"]).startswith("pay_")
    assert str(body["createdAt"]).endswith("Z")


def test_new_charge_with_capture_false_becomes_authorized(client: httpx2.Client) -> None:
    body = _charge(client, capture=False)
    assert body["status"] == "authorized"
    payment = client.get(f"/v1/payments/{body['paymentId']}").json()
    assert payment["refundableAmount"] == 0


def test_authorized_capture_becomes_captured_with_refundable_equal_amount(
    client: httpx2.Client,
) -> None:
    pid = _charge(client, capture=False)["paymentId"]
    response = client.post(f"/v1/payments/{pid}/capture", json={})
    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "captured"
    assert body["refundableAmount"] == 10_000
    assert set(body) == {
        "id",
        "status",
        "amount",
        "currency",
        "commission",
        "netAmount",
        "refundableAmount",
        "completedAt",
    }


def test_captured_capture_repeat_call_is_idempotent(client: httpx2.Client) -> None:
    pid = _charge(client, capture=False)["paymentId"]
    first = client.post(f"/v1/payments/{pid}/capture", json={}).json()
    second = client.post(f"/v1/payments/{pid}/capture", json={})
    assert second.status_code == 200
    assert second.json() == first


def test_capture_accepts_an_empty_body(client: httpx2.Client) -> None:
    pid = _charge(client, capture=False)["paymentId"]
    assert client.post(f"/v1/payments/{pid}/capture").json()["status"] == "captured"


def test_partial_capture_is_refused_naming_the_field(client: httpx2.Client) -> None:
    pid = _charge(client, capture=False)["paymentId"]
    response = client.post(f"/v1/payments/{pid}/capture", json={"amount": 5000})
    body = assert_envelope(response, 400, "SVC-VAL-4001")
    assert "amount" in body["message"]


def test_authorized_void_becomes_voided_reason_on_event(client: httpx2.Client) -> None:
    pid = _charge(client, capture=False)["paymentId"]
    response = client.post(f"/v1/payments/{pid}/void", json={"reason": "buyer cancelled"})
    assert response.status_code == 200
    assert response.json() == {"id": pid, "status": "voided", "amount": 10_000, "currency": "TRY"}
    events = client.get("/sandbox/events", params={"type": "payment.voided"}).json()["items"]
    mine = [e for e in events if e["data"]["paymentId"] == pid]
    assert len(mine) == 1
    assert mine[0]["data"]["reason"] == "buyer cancelled"


def test_voided_void_repeat_call_is_idempotent(client: httpx2.Client) -> None:
    pid = _charge(client, capture=False)["paymentId"]
    first = client.post(f"/v1/payments/{pid}/void", json={}).json()
    second = client.post(f"/v1/payments/{pid}/void", json={})
    assert second.status_code == 200
    assert second.json() == first
    events = client.get("/sandbox/events", params={"type": "payment.voided"}).json()["items"]
    assert len([e for e in events if e["data"]["paymentId"] == pid]) == 1


def test_captured_refund_within_refundable_stays_captured(client: httpx2.Client) -> None:
    pid = _charge(client)["paymentId"]
    response = client.post(f"/v1/payments/{pid}/refund", json={"amount": 4000})
    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "captured"
    assert body["refundAmount"] == 4000
    assert body["refundableAmount"] == 6000
    assert body["lastRefund"]["status"] == "completed"
    assert body["lastRefund"]["refundId"].startswith("rfn_")


def test_captured_refund_in_flight_returns_202(client: httpx2.Client) -> None:
    pid = _charge(client, token="tok_test_refund_async")["paymentId"]
    response = client.post(f"/v1/payments/{pid}/refund", json={})
    assert response.status_code == 202
    body = response.json()
    assert body["lastRefund"]["status"] == "pending"
    assert body["refundAmount"] == 0
    assert body["refundableAmount"] == 0


def test_capture_a_voided_payment_is_a_state_conflict(client: httpx2.Client) -> None:
    pid = _charge(client, capture=False)["paymentId"]
    client.post(f"/v1/payments/{pid}/void", json={})
    assert_envelope(client.post(f"/v1/payments/{pid}/capture", json={}), 409, "SVC-PAY-4090")


def test_void_a_captured_payment_is_a_state_conflict(client: httpx2.Client) -> None:
    pid = _charge(client)["paymentId"]
    assert_envelope(client.post(f"/v1/payments/{pid}/void", json={}), 409, "SVC-PAY-4090")


def test_refund_an_authorized_payment_is_a_state_conflict(client: httpx2.Client) -> None:
    pid = _charge(client, capture=False)["paymentId"]
    assert_envelope(client.post(f"/v1/payments/{pid}/refund", json={}), 409, "SVC-PAY-4090")


def test_refund_more_than_refundable_is_refused(client: httpx2.Client) -> None:
    pid = _charge(client)["paymentId"]
    client.post(f"/v1/payments/{pid}/refund", json={"amount": 9000})
    response = client.post(f"/v1/payments/{pid}/refund", json={"amount": 1001})
    assert_envelope(response, 400, "SVC-PAY-4002")
    assert client.get(f"/v1/payments/{pid}").json()["refundableAmount"] == 1000


def test_declined_card_is_400_and_recorded_declined(client: httpx2.Client) -> None:
    body = charge_body(token="tok_test_declined")
    assert_envelope(client.post("/v1/payments/card", json=body), 400, "SVC-PAY-3001")
    body = charge_body(token="tok_test_insufficient_funds")
    assert_envelope(client.post("/v1/payments/card", json=body), 400, "SVC-PAY-3002")


def test_payment_object_has_every_spec_field(client: httpx2.Client) -> None:
    pid = _charge(client, installmentCount=3)["paymentId"]
    payment = client.get(f"/v1/payments/{pid}").json()
    assert set(payment) == {
        "id",
        "merchantId",
        "transactionId",
        "status",
        "amount",
        "currency",
        "commission",
        "netAmount",
        "cardMask",
        "cardBrand",
        "cardType",
        "bin",
        "installmentCount",
        "threeDSecure",
        "refundAmount",
        "refundableAmount",
        "createdAt",
        "completedAt",
    }
    assert payment["bin"] == "424242"
    assert payment["installmentCount"] == 3
    assert payment["commission"] == 399  # 2.49 % + 2 x 0.75 %


def test_states_reached_are_the_spec_tables_states(client: httpx2.Client) -> None:
    pid = _charge(client, capture=False)["paymentId"]
    seen = {client.get(f"/v1/payments/{pid}").json()["status"]}
    client.post(f"/v1/payments/{pid}/capture", json={})
    seen.add(client.get(f"/v1/payments/{pid}").json()["status"])
    assert seen <= set(PAYMENT.states)
    assert PAYMENT.allows("authorized", "capture")
    assert not PAYMENT.allows("voided", "capture")


def _payment_in(client: httpx2.Client, state: str) -> str:
    """A payment of this client's merchant in ``state``, reached through the API."""
    if state == "pending_3ds":
        body = _charge(client, token="tok_test_3ds_challenge")
    else:
        body = _charge(client, capture=state == "captured")
    pid = str(body["paymentId"])
    if state == "voided":
        assert client.post(f"/v1/payments/{pid}/void", json={}).status_code == 200
    assert client.get(f"/v1/payments/{pid}").json()["status"] == state
    return pid


@pytest.mark.parametrize("state", ["authorized", "captured", "voided", "pending_3ds"])
@pytest.mark.parametrize("action", ["capture", "void", "refund"])
def test_every_caller_action_is_answered_as_the_table_says(
    client: httpx2.Client, state: str, action: str
) -> None:
    pid = _payment_in(client, state)
    response = client.post(f"/v1/payments/{pid}/{action}", json={})
    if PAYMENT.allows(state, action):
        assert response.status_code in (200, 202), response.text
        return
    assert_envelope(response, 409, "SVC-PAY-4090")
    allowed = ", ".join(a.replace("_", "-") for a in PAYMENT.actions(state)) or "none"
    assert response.json()["message"] == (
        f"payment is {state}; {action} is not allowed (allowed: {allowed})"
    )
    assert client.get(f"/v1/payments/{pid}").json()["status"] == state
