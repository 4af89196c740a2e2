"""A card charge under a checkout session's transactionId pays that session.

Same amount and currency, installments only where the session offers them, and only a
session a card can pay (not ``qr``, not ``card_update_only``). A mismatch is a 4xx in
the envelope naming the field, and nothing is written; a matching charge is accepted.
"""

from __future__ import annotations

import threading
from typing import Any

import httpx2
import pytest

from tests.sandbox.bodies import txn
from tests.sandbox.clients import signed_client
from tests.sandbox.envelope import assert_envelope
from workbench.sandbox import SandboxServer

SESSION_AMOUNT = 25_000
AYSE = "cus_demo_ayse"


def _session(client: httpx2.Client, **extra: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "transactionId": txn(),
        "amount": SESSION_AMOUNT,
        "currency": "TRY",
        "returnUrl": "https://shop.example/return",
        **extra,
    }
    body = {k: v for k, v in body.items() if v is not None}
    response = client.post("/v1/payments/sessions", json=body)
    assert response.status_code == 201, response.text
    return {**body, **response.json()}


def _charge(session: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {
        "transactionId": session["transactionId"],
        "amount": SESSION_AMOUNT,
        "currency": "TRY",
        "cardToken": "tok_test_success",
        "threeDSecure": False,
        **extra,
    }


def _payment_events(client: httpx2.Client, transaction_id: str) -> list[dict[str, Any]]:
    items = client.get("/sandbox/events").json()["items"]
    return [
        e
        for e in items
        if e["type"].startswith("payment.") and e["data"].get("transactionId") == transaction_id
    ]


def _nothing_written(client: httpx2.Client, session: dict[str, Any], anon: httpx2.Client) -> None:
    assert _payment_events(client, session["transactionId"]) == []
    page = anon.get(session["checkoutUrl"])
    assert page.status_code == 200  # the session is still open to be paid


def test_other_amount_is_refused_naming_amount(client: httpx2.Client, anon: httpx2.Client) -> None:
    session = _session(client)
    response = client.post("/v1/payments/card", json=_charge(session, amount=100))
    body = assert_envelope(response, 400, "SVC-VAL-4001")
    assert body["message"].startswith("amount:")
    assert str(SESSION_AMOUNT) in body["message"]
    _nothing_written(client, session, anon)


def test_installments_only_where_the_session_offers_them(
    client: httpx2.Client, anon: httpx2.Client
) -> None:
    plain = _session(client)
    response = client.post("/v1/payments/card", json=_charge(plain, installmentCount=3))
    body = assert_envelope(response, 400, "SVC-VAL-4001")
    assert body["message"].startswith("installmentCount:")
    _nothing_written(client, plain, anon)

    offering = _session(client, installmentEnabled=True)
    response = client.post("/v1/payments/card", json=_charge(offering, installmentCount=3))
    assert response.status_code == 201, response.text
    assert response.json()["installmentCount"] == 3


@pytest.mark.parametrize("mode", ["qr", "card_update_only"])
def test_a_session_a_card_cannot_pay_is_refused(
    client: httpx2.Client, anon: httpx2.Client, mode: str
) -> None:
    if mode == "qr":
        session = _session(client, mode="qr")
    else:
        session = _session(client, mode=mode, amount=None, customerId=AYSE)
    response = client.post("/v1/payments/card", json=_charge(session))
    body = assert_envelope(response, 400, "SVC-VAL-4001")
    assert body["message"].startswith("transactionId:")
    assert mode in body["message"]
    assert _payment_events(client, session["transactionId"]) == []


def test_a_matching_charge_is_accepted_and_the_page_reports_it(
    client: httpx2.Client, anon: httpx2.Client
) -> None:
    session = _session(client)
    response = client.post("/v1/payments/card", json=_charge(session))
    assert response.status_code == 201, response.text
    assert response.json()["amount"] == SESSION_AMOUNT
    # The hosted page finds the session paid by this payment, for the session's amount.
    page = anon.get(session["checkoutUrl"], follow_redirects=False)
    assert page.status_code == 200
    submit = anon.post(
        f"{session['checkoutUrl']}/pay",
        data={"cardNumber": "4242424242424242", "expiry": "12/30", "cvc": "123", "holder": "Ayse"},
        follow_redirects=False,
    )
    assert submit.status_code == 303, submit.text
    assert f"paymentId={response.json()['paymentId']}" in submit.headers["location"]
    assert "outcome=success" in submit.headers["location"]


def test_a_charge_without_a_session_is_unchanged(client: httpx2.Client) -> None:
    body = _charge({"transactionId": txn()}, amount=1234, installmentCount=2)
    response = client.post("/v1/payments/card", json=body)
    assert response.status_code == 201, response.text


def test_concurrent_charges_of_other_amounts_pay_the_session_once(
    server: SandboxServer, client: httpx2.Client
) -> None:
    session = _session(client)
    amounts = [SESSION_AMOUNT, 100, SESSION_AMOUNT + 1, SESSION_AMOUNT, 5_000, 99_999]
    answers: list[tuple[int, httpx2.Response]] = []
    barrier = threading.Barrier(len(amounts))
    lock = threading.Lock()

    def send(amount: int) -> None:
        with signed_client(server.base_url) as own:
            barrier.wait()
            response = own.post("/v1/payments/card", json=_charge(session, amount=amount))
        with lock:
            answers.append((amount, response))

    threads = [threading.Thread(target=send, args=(a,)) for a in amounts]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    for amount, response in answers:
        if amount == SESSION_AMOUNT:
            assert response.status_code in (200, 201), response.text
            assert response.json()["amount"] == SESSION_AMOUNT
        else:
            body = assert_envelope(response, 400, "SVC-VAL-4001")
            assert body["message"].startswith("amount:")
    created = _payment_events(client, session["transactionId"])
    assert len({e["data"]["paymentId"] for e in created}) == 1
    assert {e["data"]["amount"] for e in created} == {SESSION_AMOUNT}
