"""Redaction: what must never leave the machine is cut out of an exchange before it is kept.

A parity recording is meant to be shared (committed beside a team's tests, attached to
a bug report), and the sandbox's request log shows bodies on the dashboard, so both
replace the secret key, signatures, bearer tokens and card numbers by ``[redacted]``
before anything stores an exchange, by this one rule.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from workbench.spec.cards import CARD_NUMBER, is_card_number

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

# A card number standing alone (not a piece of a longer identifier or digit run); it is
# redacted when its Luhn checksum holds, so an order number that fails it is kept. A
# UUID is matched first and kept whole: its last group is twelve hex digits after a dash,
# all of them decimal and passing the checksum in about one UUID in 2,800, and a request
# id cut there no longer equals its X-Request-Id header (a false identity difference).
_UUID = r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
_DIGITS = re.compile(rf"(?<![0-9A-Za-z])(?:(?P<uuid>{_UUID})|{CARD_NUMBER.pattern})(?![0-9A-Za-z])")
# HMAC-SHA256 signatures and SHA-256 digests as hex.
_HEX = re.compile(r"(?<![0-9A-Za-z])[0-9a-fA-F]{64,}(?![0-9A-Za-z])")
# Secret keys and webhook secrets by their prefixes.
_SECRET = re.compile(r"\b(?:sk|whsec)_[A-Za-z0-9_]+")
# The buyer portal's path segment is its publicHash, a bearer.
_BEARER_PATH = re.compile(r"(?<=/v1/public/subscriptions/)[^/?#]+")


def _card_number(match: re.Match[str]) -> str:
    if match.group("uuid"):
        return match.group(0)
    return REDACTED if is_card_number(match.group(0)) else match.group(0)


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
        if isinstance(value, int) and not isinstance(value, bool) and is_card_number(str(value)):
            return REDACTED
        return value

    @staticmethod
    def _field(value: Any) -> Any:
        # null and false stay: whether a secret is set is part of the answer's shape.
        if value is None or value is False:
            return value
        return REDACTED
