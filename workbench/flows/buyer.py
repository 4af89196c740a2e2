"""The buyer's side of the hosted checkout, played without a browser (not the merchant's lesson).

A merchant's server never makes these requests: the buyer's browser does. The
notebooks and the checkout form use them to pay a session's hosted page (card
form or TR QR "pay from a bank app"), follow the redirect to ``returnUrl``, and
report where the browser landed. They only speak to the sandbox's pages, and ask for
them in English (``Accept-Language: en``), the notebooks' language; a browser that names
no language gets the pages in Turkish.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING
from urllib.parse import parse_qs, urlsplit

import httpx2

from workbench._transport import default_ssl_context

if TYPE_CHECKING:
    from workbench.models import SandboxFixtures

__all__ = [
    "DEMO_RETURN_PATH",
    "Landing",
    "card_number_for",
    "open_page",
    "pay_by_card",
    "pay_by_qr",
    "qr_payload",
]

#: The sandbox's demo merchant return page (``workbench.sandbox.merchant_return``).
DEMO_RETURN_PATH = "/demo/merchant/return"
_QR_PAYLOAD = re.compile(r'data-testid="qr-payload">([^<]+)<')
_HEADING = re.compile(r"data-testid='heading'>([^<]*)<")
_TIMEOUT = 10.0
#: What the notebooks' buyer's browser asks for: the pages in English.
_BROWSER = {"Accept-Language": "en"}


@dataclass(frozen=True, slots=True)
class Landing:
    """Where the buyer's browser ended up after paying on the hosted page.

    Attributes:
        status: the HTTP status of the page landed on.
        path: its path (the ``returnUrl``'s path).
        query: the query the hosted page added (``outcome``, ``paymentId``, ``sessionId``,
            ``errorCode``), with the ``returnUrl``'s own.
        heading: the landing page's heading, when it is the sandbox's demo return page.
    """

    status: int
    path: str
    query: dict[str, str] = field(default_factory=dict)
    heading: str = ""

    def __repr__(self) -> str:
        shown = ", ".join(f"{k}={v}" for k, v in self.query.items())
        head = f"\n  page says: {self.heading}" if self.heading else ""
        return f"buyer's browser lands on {self.path} ({self.status})\n  query: {shown}{head}"


def _landing(response: httpx2.Response) -> Landing:
    query = {k: v[0] for k, v in parse_qs(urlsplit(str(response.url)).query).items()}
    found = _HEADING.search(response.text)
    heading = html.unescape(found.group(1)) if found else ""
    return Landing(response.status_code, response.url.path, query, heading)


def card_number_for(fixtures: SandboxFixtures, card_token: str) -> str:
    """The test card number behind a test token (what a buyer types on the hosted page).

    Raises:
        ValueError: the fixtures list no number for that token.
    """
    for card in fixtures.test_cards:
        if card.token == card_token and card.number:
            return card.number
    raise ValueError(f"no test card number for {card_token}")


def open_page(checkout_url: str) -> httpx2.Response:
    """The hosted page as the buyer's browser gets it."""
    return httpx2.get(
        checkout_url, timeout=_TIMEOUT, headers=_BROWSER, verify=default_ssl_context()
    )


def qr_payload(checkout_url: str) -> str:
    """The EMVCo payload of the TR QR code a ``qr`` session's page shows (``""`` if none)."""
    found = _QR_PAYLOAD.search(open_page(checkout_url).text)
    return html.unescape(found.group(1)) if found else ""


def pay_by_card(
    checkout_url: str,
    *,
    card_number: str,
    installments: int = 1,
    expiry: str = "12/30",
    cvc: str = "123",
    holder: str = "Ayse Yilmaz",
) -> Landing:
    """Fill in and submit the hosted page's card form, then follow the redirect to ``returnUrl``."""
    form = {"cardNumber": card_number, "expiry": expiry, "cvc": cvc, "holder": holder,
            "installments": str(installments)}  # fmt: skip
    with httpx2.Client(
        timeout=_TIMEOUT, follow_redirects=True, verify=default_ssl_context(), headers=_BROWSER
    ) as browser:
        return _landing(browser.post(f"{checkout_url}/pay", data=form))


def pay_by_qr(checkout_url: str) -> Landing:
    """Press the sandbox page's "Pay from a bank app" (a bank app scanning the TR QR code)."""
    with httpx2.Client(
        timeout=_TIMEOUT, follow_redirects=True, verify=default_ssl_context(), headers=_BROWSER
    ) as browser:
        return _landing(browser.post(f"{checkout_url}/qr"))
