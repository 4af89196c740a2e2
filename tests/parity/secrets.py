"""What a recording or report must never hold: the secrets seen on the wire, card numbers."""

from __future__ import annotations

import re
from pathlib import Path

from tests.parity.runs import Seen

__all__ = ["assert_no_secrets", "luhn"]

# A card number stands alone: digits inside an id (``evt_01a20dbe11698400796189c3``) are
# not one, though a run of them passed the Luhn check once in a while.
_CARD = re.compile(r"(?<![0-9A-Za-z_])\d{13,19}(?![0-9A-Za-z_])")


def luhn(digits: str) -> bool:
    """Whether ``digits`` pass the Luhn check, as every card number does."""
    total = 0
    for i, char in enumerate(reversed(digits)):
        n = int(char) * (2 if i % 2 else 1)
        total += n - 9 if n > 9 else n
    return total % 10 == 0


def assert_no_secrets(path: Path, seen: Seen) -> None:
    """Neither the secrets seen on the wire nor any card number appears in the file."""
    text = path.read_text(encoding="utf-8")
    leaked = sorted(s[:6] + "…" for s in seen.values if s in text)
    assert leaked == [], f"{path.name} holds secrets starting {leaked}"
    cards = [m for m in _CARD.findall(text) if luhn(m)]
    assert cards == [], f"{path.name} holds card numbers"
    assert not re.search(r"[0-9a-f]{64}", text), f"{path.name} holds a signature or digest"
