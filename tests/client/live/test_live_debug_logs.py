"""Debug logging over real HTTP: nothing derived from card data reaches a log line.

A tokenisation body is card number + CVC + expiry; its SHA-256 is line 4 of the
canonical string, and with the card mask any response shows, the number can be
recovered from that hash in seconds. So no log line of the client or the sandbox may
hold the body hash, the number or the CVC.
"""

from __future__ import annotations

import hashlib
import logging

import httpx2
import pytest

from tests.client.live.target import Live
from workbench._client import Client

CARD_NUMBER = "4543600000000003"  # Luhn-valid, not a built-in test card
CVC = "739"


class _Recording(httpx2.BaseTransport):
    """A real HTTP transport that keeps the bytes of every body it sends."""

    def __init__(self) -> None:
        self._inner = httpx2.HTTPTransport()
        self.bodies: list[bytes] = []

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        self.bodies.append(request.read())
        return self._inner.handle_request(request)

    def close(self) -> None:
        self._inner.close()


def test_tokenising_with_debug_logs_leaks_no_card_data(
    live: Live, caplog: pytest.LogCaptureFixture
) -> None:
    transport = _Recording()
    with caplog.at_level(logging.DEBUG), live.client(transport=transport) as client:
        assert isinstance(client, Client)
        client.sandbox.reset()
        token = client.cards.tokenize(
            card_number=CARD_NUMBER, expiry_month=12, expiry_year=2030, cvc=CVC
        )
        client.payments.charge_card(
            transaction_id=f"debug-log-{token.token}", amount=10_000, card_token=token.token
        )
    card_bodies = [b for b in transport.bodies if CARD_NUMBER.encode() in b]
    assert len(card_bodies) == 1, "the tokenisation body was sent once"
    digest = hashlib.sha256(card_bodies[0]).hexdigest()
    lines = [record.getMessage() for record in caplog.records]
    assert any("signed POST /v1/cards/tokens" in line for line in lines), lines
    blob = "\n".join(lines)
    assert digest not in blob
    assert digest[:16] not in blob
    assert CARD_NUMBER not in blob
    assert CARD_NUMBER[6:12] not in blob  # the masked middle
    assert '"cvc"' not in blob.lower()
    assert f"cvc={CVC}" not in blob.lower()
