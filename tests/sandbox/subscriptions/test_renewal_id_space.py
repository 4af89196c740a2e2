"""Renewals live in an id space no merchant transactionId can reach.

A merchant charge made first under the renewal's guessable ``transactionId`` shape
(``<subscriptionId>-<attempt>``, the shape of earlier versions) must neither take the
renewal's place nor collide with it: every cycle's charge item points at the
renewal's own payment, for the subscription's own amount.
"""

from __future__ import annotations

import httpx2

from tests.sandbox.envelope import assert_envelope
from tests.sandbox.subscriptions.api import charges, create
from tests.sandbox.subscriptions.clock import advance

DAY = 86_400


def _merchant_charge(client: httpx2.Client, transaction_id: str) -> dict[str, object]:
    body = {
        "transactionId": transaction_id,
        "amount": 100,
        "currency": "TRY",
        "cardToken": "tok_test_success",
        "threeDSecure": False,
    }
    response = client.post("/v1/payments/card", json=body)
    assert response.status_code == 201, response.text
    return dict(response.json())


def test_guessed_renewal_ids_do_not_hijack_the_renewals(client: httpx2.Client) -> None:
    sub = create(client)
    guesses = [f"{sub['id']}-{attempt}" for attempt in (1, 2, 3)]
    merchant = {_merchant_charge(client, guess)["paymentId"] for guess in guesses}

    advance(client, 3 * 31 * DAY)

    items = charges(client, sub["id"])
    assert [i["cycleNumber"] for i in items] == [1, 2, 3]
    for item in items:
        assert item["paymentId"] not in merchant
        assert item["amountMinor"] == sub["amountMinor"]
        assert item["status"] == "captured"
        payment = client.get(f"/v1/payments/{item['paymentId']}").json()
        assert payment["amount"] == sub["amountMinor"]
        assert payment["transactionId"] not in guesses
    assert len({i["paymentId"] for i in items}) == 3
    for payment_id in merchant:  # the merchant's own charges are left as they were
        assert client.get(f"/v1/payments/{payment_id}").json()["amount"] == 100


def test_a_renewal_transaction_id_cannot_be_sent_by_a_merchant(
    client: httpx2.Client,
) -> None:
    sub = create(client)
    advance(client, 31 * DAY)
    (item,) = charges(client, sub["id"])
    renewal = client.get(f"/v1/payments/{item['paymentId']}").json()["transactionId"]
    body = {
        "transactionId": renewal,
        "amount": 100,
        "currency": "TRY",
        "cardToken": "tok_test_success",
    }
    response = client.post("/v1/payments/card", json=body)
    assert "transactionId" in assert_envelope(response, 400, "SVC-VAL-4001")["message"]
