"""The buyer in the browser tests: a phone's viewport, the test cards, typing one in.

And `landed`: the query of the merchant's address the browser came back to.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qs, urlsplit

__all__ = [
    "APPROVED",
    "BROWSER_LOCALES",
    "CHALLENGE",
    "DECLINED",
    "LABELS",
    "PHONE",
    "fill_card",
    "landed",
]

#: A phone-width viewport: the pages must be readable there.
PHONE = {"width": 390, "height": 844}

#: Test card numbers: approved at once, and one that asks for a 3-D Secure challenge.
APPROVED = "4242 4242 4242 4242"
CHALLENGE = "4000 0000 0000 3220"
DECLINED = "4000 0000 0000 0002"

#: The browser's locale for each language of the pages (what sets ``Accept-Language``).
BROWSER_LOCALES = {"en": "en-US", "tr": "tr-TR"}
#: The card form's labels (and the challenge's code field) as each language writes them.
LABELS = {
    "en": {"number": "Card number", "expiry": "Expiry (MM/YY)", "cvc": "Security code (CVC)",
           "holder": "Name on the card", "installments": "Installments",
           "code": "One-time code sent to your phone"},
    "tr": {"number": "Kart numarası", "expiry": "Son kullanma tarihi (AA/YY)",
           "cvc": "Güvenlik kodu (CVC)", "holder": "Kart üzerindeki isim",
           "installments": "Taksit seçenekleri",
           "code": "Telefonunuza gönderilen tek kullanımlık şifre"},
}  # fmt: skip


def landed(url: str) -> dict[str, str]:
    """The query of the address the browser landed at, one value per name."""
    return {k: v[0] for k, v in parse_qs(urlsplit(url).query).items()}


def fill_card(page: Any, number: str = APPROVED, language: str = "en") -> None:
    """Type a test card into the checkout form, as a buyer would, on the page in ``language``."""
    labels = LABELS[language]
    page.get_by_label(labels["number"]).fill(number)
    page.get_by_label(labels["expiry"]).fill("12/30")
    page.get_by_label(labels["cvc"]).fill("123")
    page.get_by_label(labels["holder"]).fill("Ayşe Yılmaz")
