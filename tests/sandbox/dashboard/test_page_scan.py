"""Every page of the dashboard, drawn for a merchant with something of everything, holds no
secret key, no full signature, no portal hash or link and no card number; in both languages."""

from __future__ import annotations

import re

import httpx2
import pytest

from tests.sandbox.bodies import charge_under, session_body, txn
from tests.sandbox.dashboard.pages import Merchant
from tests.sandbox.dashboard.receiver import receiving
from workbench.spec.cards import CARD_NUMBER, is_card_number

_LINK = re.compile(r'href="(/dashboard/[^"?#]*)')
#: A full signature, or any hash that long (SHA-256 in hex).
_FULL_HASH = re.compile(r"(?<![0-9a-f])[0-9a-f]{64}(?![0-9a-f])")


def _card_numbers(page: str) -> list[str]:
    """Card numbers standing alone in a page's text (a run of digits inside an id is not)."""
    text = re.sub(r"<[^>]+>", " ", page)
    alone = re.compile(rf"(?<![0-9A-Za-z_]){CARD_NUMBER.pattern}(?![0-9A-Za-z_])")
    return [m.group(0) for m in alone.finditer(text) if is_card_number(m.group(0))]


def test_the_card_number_scan_finds_one_alone_and_not_inside_an_id() -> None:
    assert _card_numbers("<td>4242 4242 4242 4242</td>") == ["4242 4242 4242 4242"]
    assert _card_numbers("<td>pay_4242424242424242</td>") == []


def _crawl(page: httpx2.Client, language: str) -> dict[str, str]:
    """Every dashboard page reachable by links from home, in ``language``."""
    seen: dict[str, str] = {}
    todo = ["/dashboard"]
    while todo:
        path = todo.pop()
        if path in seen or path.startswith("/dashboard/static/") or path == "/dashboard/live":
            continue
        answer = page.get(path, params={"lang": language})
        assert answer.status_code == 200, (path, answer.status_code)
        seen[path] = answer.text
        todo.extend(_LINK.findall(answer.text))
    return seen


@pytest.mark.parametrize("language", ["en", "tr"])
def test_no_page_shows_a_secret_a_signature_a_portal_hash_or_a_card_number(
    page: httpx2.Client, api: httpx2.Client, merchant: Merchant, language: str
) -> None:
    with receiving() as receiver:
        api.put("/sandbox/webhook", json={"url": receiver.url})
        paid = api.post("/v1/payments/card", json=charge_under(txn(), 30_000)).json()
        api.post(f"/v1/payments/{paid['paymentId']}/refund", json={"amount": 1_000})
        api.post("/v1/payments/sessions", json=session_body(txn(), 12_000))
        customer = next(c for c in merchant.customers if c.endswith("_ayse"))
        subscription = api.post(
            "/v1/subscriptions",
            json={
                "storeId": merchant.store_id,
                "customerId": customer,
                "amountMinor": 9_990,
                "currency": "TRY",
                "intervalCount": 1,
                "intervalUnit": "month",
            },
        ).json()
        api.post("/sandbox/clock/advance", json={"seconds": 32 * 86_400})
        pages = _crawl(page, language)
    kinds = {path.split("/")[2] for path in pages if path.count("/") >= 3}
    assert {"payments", "refunds", "sessions", "subscriptions", "events"} <= kinds
    assert len([p for p in pages if p.startswith("/dashboard/events/")]) >= 5
    public_hash = subscription["publicHash"]
    for path, text in pages.items():
        assert merchant.secret_key not in text, path
        assert merchant.webhook_secret not in text, path
        assert public_hash not in text, path
        assert "/v1/public/" not in text, path
        assert "/portal" not in text, path
        assert _FULL_HASH.search(text) is None, path
        assert _card_numbers(text) == [], path
        assert f'lang="{language}"' in text, path
