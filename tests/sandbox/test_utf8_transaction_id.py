"""``transactionId`` is any non-empty UTF-8 text; ``returnUrl`` any http(s) URL.

The spec's own UTF-8 signing vector (``utf8-body``, ``"ord-ş-1"``) is sent byte for byte
and accepted; Turkish text works through the sessions, the charge and its fence, the
hosted page, the events and the client. Up to 64 characters (code points, whatever their
UTF-8 bytes); a lone surrogate (not UTF-8) and the renewals' reserved ``renewal ``
prefix are refused in the envelope. A non-ASCII ``returnUrl`` is percent-encoded in the
redirect (and its host IDNA-encoded).
"""

from __future__ import annotations

import json
import uuid
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx2
import pytest

from tests.sandbox.envelope import assert_envelope
from tests.vectors import load_vectors
from workbench import Client, IdempotencyConflictError
from workbench.sandbox import SandboxServer
from workbench.spec import limits

CARD = {"cardNumber": "4242424242424242", "expiry": "12/30", "cvc": "123", "holder": "Ayşe"}


def _vector() -> dict[str, Any]:
    (vector,) = [v for v in load_vectors() if v["name"] == "utf8-body"]
    return vector


def _events(client: httpx2.Client, transaction_id: str) -> list[dict[str, Any]]:
    items = client.get("/sandbox/events").json()["items"]
    return [e for e in items if e["data"].get("transactionId") == transaction_id]


def test_the_specs_utf8_vector_opens_a_session_that_pays_end_to_end(
    client: httpx2.Client, anon: httpx2.Client
) -> None:
    vector = _vector()
    raw = vector["body"].encode()
    assert json.loads(raw)["transactionId"] == "ord-ş-1"
    headers = {"Content-Type": "application/json"}
    created = client.post(vector["url"], content=raw, headers=headers)
    assert created.status_code == 201, created.text
    # The fence: the same bytes again answer the same session.
    again = client.post(vector["url"], content=raw, headers=headers)
    assert again.status_code == 200, again.text
    assert again.json()["sessionId"] == created.json()["sessionId"]

    page = anon.get(created.json()["checkoutUrl"])
    assert page.status_code == 200
    assert "Çiçek siparişi – ığüşöç" in page.text
    paid = anon.post(f"{created.json()['checkoutUrl']}/pay", data=CARD, follow_redirects=False)
    assert paid.status_code == 303, paid.text
    query = parse_qs(urlsplit(paid.headers["location"]).query)
    assert query["outcome"] == ["success"]
    payment = client.get(f"/v1/payments/{query['paymentId'][0]}").json()
    assert payment["transactionId"] == "ord-ş-1"
    assert payment["amount"] == 25_050
    client.post("/sandbox/reconciler/tick")
    types = {e["type"] for e in _events(client, "ord-ş-1")}
    assert {"payment.captured", "session.completed"} <= types


def test_turkish_transaction_ids_through_the_client(server: SandboxServer) -> None:
    transaction_id = f"Sipariş ığüşöç ÇĞİÖŞÜ №{uuid.uuid4().hex[:8]}"
    return_url = "https://çiçek.example/siparişler/dönüş?no=ş"
    with Client(
        base_url=server.base_url, api_key=server.config.api_key, secret_key=server.config.secret_key
    ) as client:
        session = client.sessions.create(
            transaction_id=transaction_id, amount=12_345, return_url=return_url
        )
        charge = client.payments.charge_card(
            transaction_id=transaction_id, amount=12_345, card_token="tok_test_success"
        )
        assert charge.status == "captured"
        # The transactionId fence holds for Turkish text as for ASCII.
        same = client.payments.charge_card(
            transaction_id=transaction_id, amount=12_345, card_token="tok_test_success"
        )
        assert same.payment_id == charge.payment_id
        with pytest.raises(IdempotencyConflictError):
            client.payments.charge_card(
                transaction_id=transaction_id,
                amount=12_345,
                card_token="tok_test_refund_async",
            )
        # Text that differs only in its accents is another transactionId.
        other = client.payments.charge_card(
            transaction_id=transaction_id.replace("ş", "s"),
            amount=100,
            card_token="tok_test_success",
        )
        assert other.payment_id != charge.payment_id
        payment = client.payments.retrieve(charge.payment_id)
        assert payment.transaction_id == transaction_id
    with httpx2.Client(timeout=30, verify=False) as anon:
        paid = anon.post(f"{session.checkout_url}/pay", data=CARD, follow_redirects=False)
    assert paid.status_code == 303, paid.text
    location = paid.headers["location"]
    assert location.isascii()
    assert location.startswith(
        "https://xn--iek-1lab.example/sipari%C5%9Fler/d%C3%B6n%C3%BC%C5%9F?no=%C5%9F&outcome=success"
    )
    assert f"paymentId={charge.payment_id}" in location


def test_the_limit_is_64_characters_not_bytes(client: httpx2.Client) -> None:
    longest = "ş" * (limits.TRANSACTION_ID_MAX - 8) + uuid.uuid4().hex[:8]  # 120 bytes
    body = {"amount": 100, "currency": "TRY", "cardToken": "tok_test_success"}
    ok = client.post("/v1/payments/card", json={**body, "transactionId": longest})
    assert ok.status_code == 201, ok.text
    too_long = client.post("/v1/payments/card", json={**body, "transactionId": longest + "ş"})
    assert assert_envelope(too_long, 400, "SVC-VAL-4001")["message"].startswith("transactionId")


@pytest.mark.parametrize(
    ("raw", "route"),
    [
        ('"\\ud800-lone"', "/v1/payments/card"),
        ('"\\ud800-lone"', "/v1/payments/sessions"),
        ('"renewal sub_x 1"', "/v1/payments/card"),
        ('""', "/v1/payments/sessions"),
    ],
)
def test_what_is_not_utf8_text_or_is_reserved_is_refused(
    client: httpx2.Client, raw: str, route: str
) -> None:
    if route.endswith("card"):
        rest = '"amount":100,"currency":"TRY","cardToken":"tok_test_success"'
    else:
        rest = '"amount":100,"currency":"TRY","returnUrl":"https://shop.example/r"'
    body = f'{{"transactionId":{raw},{rest}}}'.encode()
    response = client.post(route, content=body, headers={"Content-Type": "application/json"})
    message = assert_envelope(response, 400, "SVC-VAL-4001")["message"]
    assert message.startswith("transactionId")


@pytest.mark.parametrize(
    "url",
    ["https://shop.example/a b", "https://shop.example/\u0085x", "ftp://shop.example/ş"],
)
def test_a_return_url_with_spaces_controls_or_another_scheme_is_refused(
    client: httpx2.Client, url: str
) -> None:
    body = {
        "transactionId": uuid.uuid4().hex,
        "amount": 100,
        "currency": "TRY",
        "returnUrl": url,
    }
    response = client.post("/v1/payments/sessions", json=body)
    assert assert_envelope(response, 400, "SVC-VAL-4001")["message"].startswith("returnUrl")
