"""What a card number looks like: written once for the sandbox, the client and the recorder.

The sandbox refuses a ``cardToken`` that holds one, the client refuses to send one, and
the parity recorder cuts one out of every exchange it keeps. All three read the shape
from here, so a value one of them treats as a card number, the others treat so too.
"""

from __future__ import annotations

import re

__all__ = ["CARD_NUMBER", "is_card_number", "looks_like_card_number", "luhn_ok"]

#: A run of 12 to 19 ASCII digits, optionally grouped by single spaces or dashes
#: (``4242 4242 4242 4242``, ``4000-0000-0000-3220``): the shape of a card number.
CARD_NUMBER = re.compile(r"[0-9](?:[ -]?[0-9]){11,18}")


def luhn_ok(digits: str) -> bool:
    """Whether a string of ASCII digits passes the Luhn check."""
    total = 0
    for index, char in enumerate(reversed(digits)):
        digit = int(char)
        if index % 2:
            digit = digit * 2 - 9 if digit > 4 else digit * 2
        total += digit
    return total % 10 == 0


def looks_like_card_number(text: str) -> bool:
    """Whether ``text`` holds anything shaped like a card number (`CARD_NUMBER`), valid or not."""
    return CARD_NUMBER.search(text) is not None


def is_card_number(text: str) -> bool:
    """Whether ``text`` is, whole, a card number: `CARD_NUMBER`'s shape and a valid checksum."""
    return CARD_NUMBER.fullmatch(text) is not None and luhn_ok(re.sub(r"[ -]", "", text))
