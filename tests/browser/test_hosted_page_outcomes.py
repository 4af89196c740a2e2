"""The hosted pages in Chromium: what the buyer sees and where they land.

A page whose session finds a payment that is not its own under its
``transactionId`` (another amount, as a charge racing the session's creation would leave)
refuses to be paid and never sends the buyer back with ``outcome=success``.
A Turkish ``transactionId`` and a ``returnUrl`` with a Turkish path go through the card
and TR QR pages, the redirect and the webhooks. A 15-digit card typed on the
page keeps its length in the payment's mask.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any
from urllib.parse import unquote, urlsplit

import pytest

from tests.browser.buyer import fill_card, landed
from tests.browser.screenshots import Shots
from tests.rows import update_row
from workbench import Client
from workbench.emvco import parse_tlv
from workbench.sandbox import SandboxServer
from workbench.sandbox.payments.tables import payments as payments_table
from workbench.webhooks import WebhookListener

pytestmark = pytest.mark.browser

TURKISH_PATH = "/siparişler/dönüş"


def _turkish_return(merchant: str) -> str:
    """The merchant's return page at a Turkish path (the page answers any path)."""
    origin = "{0.scheme}://{0.netloc}".format(urlsplit(merchant))
    return f"{origin}{TURKISH_PATH}?sipariş=42"


def _land_at_turkish_path(page: Any) -> dict[str, str]:
    page.wait_for_url(lambda url: urlsplit(url).path.startswith("/sipari"))
    assert page.get_by_role("heading", name="Back at the merchant").is_visible()
    path = urlsplit(page.url).path
    assert path == "/sipari%C5%9Fler/d%C3%B6n%C3%BC%C5%9F"
    assert unquote(path) == TURKISH_PATH
    return landed(page.url)


def test_a_turkish_transaction_id_and_return_path_by_card(
    new_session: Callable[..., Any],
    merchant: str,
    page: Any,
    client: Client,
    hooks: WebhookListener,
    shot: Shots,
) -> None:
    transaction_id = f"Sipariş ığüşöç ÇĞİÖŞÜ {uuid.uuid4().hex[:8]}"
    session = new_session(transaction_id=transaction_id, return_url=_turkish_return(merchant))
    page.goto(session.checkout_url)
    fill_card(page)
    page.get_by_role("button", name="Pay TRY 1,234.56").click()
    query = _land_at_turkish_path(page)
    shot(page, "returned")
    assert query["outcome"] == "success"
    assert query["sipariş"] == "42"
    payment = client.payments.retrieve(query["paymentId"])
    assert payment.transaction_id == transaction_id
    client.sandbox.tick()
    hooks.wait_for("session.completed", timeout=10)
    mine = [e for e in hooks.events if e.data.get("transactionId") == transaction_id]
    assert {e.type for e in mine} >= {"payment.captured", "session.completed"}


def test_a_turkish_transaction_id_by_tr_qr(
    new_session: Callable[..., Any], merchant: str, page: Any, client: Client
) -> None:
    transaction_id = f"ord-ş-{uuid.uuid4().hex[:8]}"
    session = new_session(
        transaction_id=transaction_id,
        mode="qr",
        amount=34_900,
        return_url=_turkish_return(merchant),
    )
    page.goto(session.checkout_url)
    payload = page.get_by_test_id("qr-payload").text_content() or ""
    # The bank app reads ASCII: the reference keeps the letter, not its cedilla.
    assert parse_tlv(parse_tlv(payload)["62"])["05"] == transaction_id.replace("ş", "s")
    page.get_by_role("button", name="Pay from a bank app").click()
    query = _land_at_turkish_path(page)
    assert query["outcome"] == "success"
    assert client.payments.retrieve(query["paymentId"]).transaction_id == transaction_id


@pytest.mark.parametrize("mode", ["payment", "qr"])
def test_a_page_never_completes_with_another_payment(
    new_session: Callable[..., Any],
    server: SandboxServer,
    page: Any,
    client: Client,
    shot: Shots,
    mode: str,
) -> None:
    session_txn = f"order-{uuid.uuid4().hex[:16]}"
    session = new_session(transaction_id=session_txn, mode=mode)
    ten_lira = client.payments.charge_card(
        transaction_id=f"other-{uuid.uuid4().hex[:16]}",
        amount=1_000,
        card_token="tok_test_success",
        three_d_secure=False,
    )
    page.goto(session.checkout_url)  # opened before the payment turned up under its id
    update_row(
        server.config.db_url, payments_table, ten_lira.payment_id, transaction_id=session_txn
    )
    if mode == "payment":
        fill_card(page)
        page.get_by_role("button", name="Pay TRY 1,234.56").click()
    else:
        page.get_by_role("button", name="Pay from a bank app").click()
    heading = page.get_by_role("heading", name="This checkout cannot be paid")
    heading.wait_for()
    shot(page, "refused")
    assert "/checkout/" in page.url
    assert "outcome=success" not in page.url
    assert page.get_by_role("link", name="Back to the merchant").is_visible()
    again = page.goto(session.checkout_url)
    assert again is not None
    assert again.status == 409
    completed = [
        e
        for e in client.sandbox.events(type="session.completed").items
        if e.data.get("sessionId") == session.session_id
    ]
    assert completed == []


def test_a_fifteen_digit_card_keeps_its_length(
    new_session: Callable[..., Any], merchant: str, page: Any, client: Client
) -> None:
    session = new_session()
    page.goto(session.checkout_url)
    fill_card(page, "3782 822463 10005")
    page.get_by_role("button", name="Pay TRY 1,234.56").click()
    page.wait_for_url("**/orders/return?*")
    payment = client.payments.retrieve(landed(page.url)["paymentId"])
    assert payment.card_mask == "378282*****0005"
    assert payment.card_brand == "amex"
