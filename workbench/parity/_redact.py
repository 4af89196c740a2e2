"""Redaction: what must never leave the machine is cut out of an exchange before it is kept.

A recording is meant to be shared (committed beside a team's tests, attached to a bug
report), so the secret key, signatures, bearer tokens and card numbers are replaced by
``[redacted]`` the moment an exchange is seen, before anything stores it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

__all__ = ["REDACTED", "SECRET_FIELDS", "Redactor"]

#: What a redacted value reads as.
REDACTED = "[redacted]"

#: Body fields whose value is a secret, a bearer or card data, wherever they appear.
SECRET_FIELDS = frozenset(
    {
        "secretKey",
        "webhookSecret",
        "signature",
        "pares",
        "publicHash",
        "number",
        "cardNumber",
        "pan",
        "cvc",
        "cvv",
        "expiry",
    }
)

# A run of 13 to 19 digits, optionally grouped by spaces or dashes: a card number if
# its Luhn checksum holds.
_DIGITS = re.compile(r"(?<![0-9A-Za-z])\d(?:[ -]?\d){12,18}(?![0-9A-Za-z])")
# HMAC-SHA256 signatures and SHA-256 digests as hex.
_HEX = re.compile(r"(?<![0-9A-Za-z])[0-9a-fA-F]{64,}(?![0-9A-Za-z])")
# Secret keys and webhook secrets by their prefixes.
_SECRET = re.compile(r"\b(?:sk|whsec)_[A-Za-z0-9_]+")
# The buyer portal's path segment is its publicHash, a bearer.
_BEARER_PATH = re.compile(r"(?<=/v1/public/subscriptions/)[^/?#]+")


def _luhn(digits: str) -> bool:
    total = 0
    for i, char in enumerate(reversed(digits)):
        n = int(char)
        if i % 2:
            n = n * 2 - 9 if n > 4 else n * 2
        total += n
    return total % 10 == 0


def _card_number(match: re.Match[str]) -> str:
    digits = re.sub(r"[ -]", "", match.group(0))
    return REDACTED if _luhn(digits) else match.group(0)


class Redactor:
    """Cuts secrets out of JSON values, text and paths.

    Args:
        secrets: literal values to remove wherever they appear (the secret keys in use).
    """

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        self._secrets = tuple(sorted({s for s in secrets if s}, key=len, reverse=True))

    def text(self, value: str) -> str:
        """``value`` with secret keys, signatures and card numbers replaced."""
        for secret in self._secrets:
            value = value.replace(secret, REDACTED)
        value = _SECRET.sub(REDACTED, value)
        value = _HEX.sub(REDACTED, value)
        return _DIGITS.sub(_card_number, value)

    def path(self, path: str) -> str:
        """A request path (with its query) without bearer segments or secrets."""
        return self.text(_BEARER_PATH.sub(REDACTED, path))

    def json(self, value: Any) -> Any:
        """A copy of a decoded JSON value with secret fields and secret-looking text replaced."""
        if isinstance(value, dict):
            return {
                str(k): (self._field(v) if k in SECRET_FIELDS else self.json(v))
                for k, v in value.items()
            }
        if isinstance(value, list):
            return [self.json(v) for v in value]
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, int) and not isinstance(value, bool):
            digits = str(value)
            if 13 <= len(digits) <= 19 and _luhn(digits):
                return REDACTED
        return value

    @staticmethod
    def _field(value: Any) -> Any:
        # null and false stay: whether a secret is set is part of the answer's shape.
        if value is None or value is False:
            return value
        return REDACTED
