"""One rule for "looks like a card number": the sandbox, the client and the recorder share it.

`workbench.spec.cards` holds the shape; the sandbox's token check, the client's
``card_token`` check and the parity recorder's redaction all use it, so each example
below is refused (or redacted) by all three, or by none.
"""

from __future__ import annotations

import pytest

from workbench import spec
from workbench.parity import REDACTED, Redactor
from workbench.resources import _base
from workbench.sandbox import cards
from workbench.sandbox.errors import ServiceError
from workbench.sandbox.payments import service as payments
from workbench.sandbox.subscriptions import service as subscriptions
from workbench.spec import redaction as _redact

#: Shaped like a card number, each with a valid Luhn checksum.
CARD_NUMBERS = [
    "4242424242424242",
    "4242 4242 4242 4242",
    "4000-0000-0000-3220",
    "424242424242",  # 12 digits, the shortest
    "4242424242424242428",  # 19 digits, the longest
]
#: Not shaped like a card number.
NOT_CARD_NUMBERS = [
    "tok_test_success",
    "42424242424",  # 11 digits
    "4242  4242  4242  4242",  # doubled separators: four short runs
    "tok_4242_4242_4242",
    "4242.4242.4242.4242",
]


def _sandbox_refuses(token: str) -> bool:
    try:
        payments._check_token(token)
    except ServiceError as exc:
        return exc.code == "SVC-VAL-4002"
    return False


def _client_refuses(token: str) -> bool:
    try:
        _base.token(token)
    except ValueError as exc:
        return "raw card number" in str(exc)
    return False


def _recorder_redacts(text: str) -> bool:
    return Redactor().text(f"card {text} here") == f"card {REDACTED} here"


def test_every_place_uses_the_rule_in_spec() -> None:
    assert payments.looks_like_card_number is spec.looks_like_card_number
    assert subscriptions.looks_like_card_number is spec.looks_like_card_number
    assert _base.looks_like_card_number is spec.looks_like_card_number
    assert cards.looks_like_card_number is spec.looks_like_card_number
    assert cards.is_card_number is spec.is_card_number
    assert _redact.is_card_number is spec.is_card_number
    assert spec.CARD_NUMBER.pattern in _redact._DIGITS.pattern


@pytest.mark.parametrize("number", CARD_NUMBERS)
def test_a_card_number_is_refused_everywhere(number: str) -> None:
    assert spec.is_card_number(number)
    assert _sandbox_refuses(number)
    assert _sandbox_refuses(f"tok_{number}")
    assert _client_refuses(number)
    assert _client_refuses(f"tok_{number}")
    assert _recorder_redacts(number)


@pytest.mark.parametrize("text", NOT_CARD_NUMBERS)
def test_what_is_not_shaped_like_one_passes_everywhere(text: str) -> None:
    assert not spec.looks_like_card_number(text)
    assert not _sandbox_refuses(text)
    assert not _client_refuses(text)
    assert not _recorder_redacts(text)
    assert Redactor().text(text) == text


def test_the_recorder_keeps_a_number_that_fails_the_checksum() -> None:
    order = "4242424242424241"
    assert spec.looks_like_card_number(order)
    assert not spec.is_card_number(order)
    assert _sandbox_refuses(order)
    assert _client_refuses(order)
    assert Redactor().text(order) == order
