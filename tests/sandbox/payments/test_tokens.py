"""Tokenization of test card numbers; tokens behave like the built-in test tokens."""

from __future__ import annotations

import httpx2
import pytest

from tests.sandbox.bodies import charge_body
from tests.sandbox.envelope import assert_envelope
from workbench.sandbox.cards import TEST_CARDS
from workbench.spec import looks_like_card_number


def _tokenize(client: httpx2.Client, number: str) -> httpx2.Response:
    return client.post(
        "/v1/cards/tokens",
        json={"cardNumber": number, "expiryMonth": 12, "expiryYear": 2099, "cvc": "123"},
    )


@pytest.mark.parametrize(
    "card",
    [
        c
        for c in TEST_CARDS
        if c.behaviour in ("success", "declined", "insufficient_funds", "3ds_challenge")
    ],
    ids=lambda c: c.behaviour,
)
def test_tokenized_test_number_behaves_like_its_token(client: httpx2.Client, card: object) -> None:
    number = card.number  # type: ignore[attr-defined]
    response = _tokenize(client, number)
    assert response.status_code == 201
    token = response.json()
    assert token["token"].startswith("tok_")
    assert number not in response.text
    assert token["cardMask"] == f"{number[:6]}******{number[-4:]}"
    mine = client.post("/v1/payments/card", json=charge_body(token=token["token"]))
    builtin = client.post("/v1/payments/card", json=charge_body(token=card.token))  # type: ignore[attr-defined]
    assert mine.status_code == builtin.status_code
    if mine.status_code < 300:
        assert mine.json()["status"] == builtin.json()["status"]
    else:
        assert mine.json()["code"] == builtin.json()["code"]


def test_invalid_luhn_is_rejected_without_echo(client: httpx2.Client) -> None:
    response = _tokenize(client, "4242424242424241")
    assert "cardNumber" in assert_envelope(response, 400, "SVC-VAL-4001")["message"]
    assert "4242424242424241" not in response.text


def test_expired_card_is_rejected(client: httpx2.Client) -> None:
    response = client.post(
        "/v1/cards/tokens",
        json={"cardNumber": "4242424242424242", "expiryMonth": 1, "expiryYear": 2001, "cvc": "123"},
    )
    assert_envelope(response, 400, "SVC-VAL-4001")


def test_a_merchants_token_is_unknown_to_another_merchant(
    client: httpx2.Client, other_client: httpx2.Client
) -> None:
    token = _tokenize(client, "4242424242424242").json()["token"]
    response = other_client.post("/v1/payments/card", json=charge_body(token=token))
    assert_envelope(response, 400, "SVC-VAL-4001")


def test_fresh_tokens_never_look_like_a_card_number(monkeypatch: pytest.MonkeyPatch) -> None:
    from workbench.sandbox import cards

    draws = iter(["123456789012abcdefabcdef", "0123456789abcdef01234567"])
    monkeypatch.setattr(cards.secrets, "token_hex", lambda _n: next(draws))
    token = cards.new_token()
    assert token == "tok_0123456789abcdef01234567"
    assert not looks_like_card_number(token)
