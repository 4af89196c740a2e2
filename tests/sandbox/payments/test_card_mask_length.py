"""``cardMask`` keeps the card's length.

First six digits, one ``*`` per hidden digit, last four: 5 stars for a 15-digit card,
9 for a 19-digit one, the same on the token, the charge response, the payment and the
hosted page's payment.
"""

from __future__ import annotations

import httpx2
import pytest

from tests.sandbox.bodies import charge_body, txn

CARDS = {
    "amex-15": ("378282246310005", "378282*****0005"),
    "visa-19": ("4000000000000000006", "400000*********0006"),
    "visa-16": ("4242424242424242", "424242******4242"),
    "short-12": ("400000000002", "400000**0002"),
}


@pytest.mark.parametrize("name", sorted(CARDS))
def test_the_mask_keeps_the_length_from_token_to_payment(client: httpx2.Client, name: str) -> None:
    number, expected = CARDS[name]
    token = client.post(
        "/v1/cards/tokens",
        json={"cardNumber": number, "expiryMonth": 12, "expiryYear": 2030, "cvc": "1234"},
    )
    assert token.status_code == 201, token.text
    assert token.json()["cardMask"] == expected
    charge = client.post("/v1/payments/card", json=charge_body(token=token.json()["token"]))
    assert charge.status_code == 201, charge.text
    assert charge.json()["cardMask"] == expected
    payment = client.get(f"/v1/payments/{charge.json()['paymentId']}").json()
    assert payment["cardMask"] == expected
    assert len(payment["cardMask"]) == len(number)
    assert payment["bin"] == number[:6]


def test_a_card_typed_on_the_hosted_page_keeps_its_length(
    client: httpx2.Client, anon: httpx2.Client
) -> None:
    number, expected = CARDS["amex-15"]
    session = client.post(
        "/v1/payments/sessions",
        json={
            "transactionId": txn(),
            "amount": 5_000,
            "currency": "TRY",
            "returnUrl": "https://shop.example/return",
        },
    )
    assert session.status_code == 201, session.text
    paid = anon.post(
        f"{session.json()['checkoutUrl']}/pay",
        data={"cardNumber": number, "expiry": "12/30", "cvc": "1234", "holder": "Ayse"},
        follow_redirects=False,
    )
    assert paid.status_code == 303, paid.text
    payment_id = dict(
        part.split("=", 1) for part in paid.headers["location"].split("?", 1)[1].split("&")
    )["paymentId"]
    assert client.get(f"/v1/payments/{payment_id}").json()["cardMask"] == expected
