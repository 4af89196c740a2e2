"""Bad input: a 4xx in the envelope naming the field, never a 500, never a trace."""

from __future__ import annotations

import uuid
from typing import Any

import httpx2
import pytest

from tests.sandbox.bodies import charge_body
from tests.sandbox.envelope import assert_envelope
from workbench.spec import limits


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"amount": "10000"}, "amount"),
        ({"amount": 100.5}, "amount"),
        ({"amount": True}, "amount"),
        ({"amount": 0}, "amount"),
        ({"amount": -500}, "amount"),
        ({"amount": 10**30}, "amount"),
        ({"currency": "USD"}, "currency"),
        ({"installmentCount": 0}, "installmentCount"),
        ({"installmentCount": 13}, "installmentCount"),
        ({"threeDSecure": "yes"}, "threeDSecure"),
        ({"amout": 100}, "amout"),
        ({"transactionId": ""}, "transactionId"),
        ({"transactionId": 12}, "transactionId"),
    ],
)
def test_charge_field_errors_name_the_field(
    client: httpx2.Client, change: dict[str, Any], field: str
) -> None:
    response = client.post("/v1/payments/card", json={**charge_body(), **change})
    body = assert_envelope(response, 400, "SVC-VAL-4001")
    assert field in body["message"]


@pytest.mark.parametrize("missing", ["transactionId", "amount", "currency", "cardToken"])
def test_missing_required_field_is_named(client: httpx2.Client, missing: str) -> None:
    body = charge_body()
    del body[missing]
    message = assert_envelope(client.post("/v1/payments/card", json=body), 400, "SVC-VAL-4001")
    assert missing in message["message"]


def test_typo_amout_is_reported_as_unknown_field(client: httpx2.Client) -> None:
    body = charge_body()
    body["amout"] = body.pop("amount")
    message = assert_envelope(client.post("/v1/payments/card", json=body), 400, "SVC-VAL-4001")
    assert "amout: unknown field" in message["message"]


@pytest.mark.parametrize(
    "raw",
    [b"{not json", b"", b"[1, 2]", b'"text"', b"null", b"42", b"[" * 60_000, b"\xff\xfe"],
    ids=["broken", "empty", "array", "string", "null", "number", "deep", "not-utf8"],
)
def test_invalid_json_or_non_object_body_is_4000(client: httpx2.Client, raw: bytes) -> None:
    response = client.post(
        "/v1/payments/card", content=raw, headers={"Content-Type": "application/json"}
    )
    assert_envelope(response, 400, "SVC-GW-4000")


def test_huge_body_is_4013_with_400(client: httpx2.Client) -> None:
    body = {**charge_body(), "description": "x" * (limits.MAX_BODY_BYTES + 10)}
    assert_envelope(client.post("/v1/payments/card", json=body), 400, "SVC-GW-4013")


@pytest.mark.parametrize(
    "token", ["4242424242424242", "4242 4242 4242 4242", "tok_4242424242424242", "card-1"]
)
def test_raw_card_numbers_and_non_tokens_are_rejected_and_not_echoed(
    client: httpx2.Client, token: str
) -> None:
    response = client.post("/v1/payments/card", json=charge_body(token=token))
    assert response.status_code == 400
    code = "SVC-VAL-4001" if token == "card-1" else "SVC-VAL-4002"
    assert_envelope(response, 400, code)
    assert token not in response.text
    assert "4242424242" not in response.text


def test_raw_card_number_is_never_stored(client: httpx2.Client) -> None:
    body = charge_body(token="4242424242424242")
    client.post("/v1/payments/card", json=body)
    events = client.get("/sandbox/events").text
    assert "4242424242424242" not in events


def test_unknown_token_is_named(client: httpx2.Client) -> None:
    response = client.post("/v1/payments/card", json=charge_body(token="tok_nope"))
    assert "cardToken" in assert_envelope(response, 400, "SVC-VAL-4001")["message"]


def test_void_reason_of_501_characters_is_rejected(client: httpx2.Client) -> None:
    pid = client.post("/v1/payments/card", json=charge_body(capture=False)).json()["paymentId"]
    response = client.post(f"/v1/payments/{pid}/void", json={"reason": "r" * 501})
    assert "reason" in assert_envelope(response, 400, "SVC-VAL-4001")["message"]
    assert client.get(f"/v1/payments/{pid}").json()["status"] == "authorized"


def test_void_reason_of_500_characters_is_accepted(client: httpx2.Client) -> None:
    pid = client.post("/v1/payments/card", json=charge_body(capture=False)).json()["paymentId"]
    assert client.post(f"/v1/payments/{pid}/void", json={"reason": "r" * 500}).status_code == 200


@pytest.mark.parametrize("amount", [0, -1, "5", 1.5])
def test_bad_refund_amounts_are_rejected(client: httpx2.Client, amount: object) -> None:
    pid = client.post("/v1/payments/card", json=charge_body()).json()["paymentId"]
    response = client.post(f"/v1/payments/{pid}/refund", json={"amount": amount})
    assert "amount" in assert_envelope(response, 400, "SVC-VAL-4001")["message"]


def test_unknown_payment_is_404(client: httpx2.Client) -> None:
    assert_envelope(client.get("/v1/payments/pay_doesnotexist"), 404, "SVC-GW-4004")
    assert_envelope(client.post("/v1/payments/pay_nope/capture", json={}), 404, "SVC-GW-4004")


def test_debit_card_with_installments_is_refused(client: httpx2.Client) -> None:
    body = charge_body(token="tok_test_refund_async", installmentCount=3)
    response = client.post("/v1/payments/card", json=body)
    assert "installmentCount" in assert_envelope(response, 400, "SVC-VAL-4001")["message"]


def test_unknown_customer_is_named(client: httpx2.Client) -> None:
    response = client.post("/v1/payments/card", json=charge_body(customerId="cus_nobody"))
    assert "customerId" in assert_envelope(response, 400, "SVC-VAL-4001")["message"]


def test_malformed_idempotency_key_is_refused(client: httpx2.Client) -> None:
    response = client.post(
        "/v1/payments/card", json=charge_body(), headers={"Idempotency-Key": "has space"}
    )
    assert_envelope(response, 400, "SVC-GW-4000")


def test_over_long_path_id_is_a_400_not_a_500(client: httpx2.Client) -> None:
    response = client.post(
        f"/v1/payments/pay_{'x' * 400}/refund",
        json={},
        headers={"Idempotency-Key": str(uuid.uuid4())},
    )
    assert_envelope(response, 400, "SVC-VAL-4001")


def test_lone_surrogate_in_a_string_is_a_400(client: httpx2.Client) -> None:
    raw = (
        b'{"transactionId":"\\ud800","amount":100,"currency":"TRY","cardToken":"tok_test_success"}'
    )
    response = client.post(
        "/v1/payments/card", content=raw, headers={"Content-Type": "application/json"}
    )
    assert_envelope(response, 400, "SVC-VAL-4001")


@pytest.mark.parametrize(
    "url",
    ["http://shop.example:}A/hook", "http://:80/hook", "https://[::1/x", "http://shop]x/hook"],
    ids=["port-not-a-number", "no-host", "broken-ipv6", "bracket-in-host"],
)
def test_unsendable_callback_url_is_rejected_when_given(client: httpx2.Client, url: str) -> None:
    # Found by schemathesis: such a URL used to be stored and crash the clock advance
    # that tried to deliver an event to it.
    body = {
        "transactionId": f"cb-{abs(hash(url))}",
        "amount": 1000,
        "currency": "TRY",
        "returnUrl": "https://shop.example/return",
        "callbackUrl": url,
    }
    message = assert_envelope(client.post("/v1/payments/sessions", json=body), 400, "SVC-VAL-4001")
    assert "callbackUrl" in message["message"]
    hook = client.put("/sandbox/webhook", json={"url": url})
    assert_envelope(hook, 400, "SVC-VAL-4001")
    advanced = client.post("/sandbox/clock/advance", json={"seconds": 60})
    assert advanced.status_code == 200


@pytest.mark.parametrize(
    ("method", "path", "params", "body"),
    [
        ("GET", "/v1/subscriptions", {"customerId": "cus_\x00x"}, None),
        ("POST", "/v1/payments/card", None, "nul"),
        ("GET", "/v1/payments/pay_%00x", None, None),
    ],
    ids=["query", "json-escape", "path"],
)
def test_a_nul_anywhere_is_4000_and_writes_nothing(
    client: httpx2.Client, method: str, path: str, params: dict[str, str] | None, body: str | None
) -> None:
    clean = charge_body()
    payload = {**clean, "transactionId": clean["transactionId"] + "\x00"} if body else None
    response = client.request(method, path, params=params, json=payload)
    assert_envelope(response, 400, "SVC-GW-4000")
    if payload is not None:  # nothing was written under the id: the clean charge is new
        assert client.post("/v1/payments/card", json=clean).status_code == 201
