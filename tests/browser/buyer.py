"""The buyer in the browser tests: a phone's viewport, the test cards, typing one in.

And `landed`: the query of the merchant's address the browser came back to.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qs, urlsplit

__all__ = ["APPROVED", "CHALLENGE", "PHONE", "fill_card", "landed"]

#: A phone-width viewport: the pages must be readable there.
PHONE = {"width": 390, "height": 844}

#: Test card numbers: approved at once, and one that asks for a 3-D Secure challenge.
APPROVED = "4242 4242 4242 4242"
CHALLENGE = "4000 0000 0000 3220"


def landed(url: str) -> dict[str, str]:
    """The query of the address the browser landed at, one value per name."""
    return {k: v[0] for k, v in parse_qs(urlsplit(url).query).items()}


def fill_card(page: Any, number: str = APPROVED) -> None:
    """Type a test card into the checkout form, as a buyer would."""
    page.get_by_label("Card number").fill(number)
    page.get_by_label("Expiry (MM/YY)").fill("12/30")
    page.get_by_label("Security code (CVC)").fill("123")
    page.get_by_label("Name on the card").fill("Ayşe Yılmaz")
