"""The buyer's language on the hosted pages: which one is chosen, and that it holds.

The rules are `workbench.sandbox.checkout.languages`'s: ``?lang=``, then the cookie the
switcher's choice sets, then ``Accept-Language``, else Turkish. Amounts and dates are
CLDR's through Babel. The merchant's API keeps its English envelope whatever the buyer
reads.
"""

from __future__ import annotations

import re
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx2
import pytest

from tests.sandbox.bodies import txn
from workbench.money import split_installments
from workbench.sandbox.checkout import languages
from workbench.sandbox.checkout.rendering import with_lang
from workbench.sandbox.merchant_return import RETURN_PATH

CHALLENGE_PAN = "4000000000003220"


@pytest.mark.parametrize(
    ("query", "cookie", "header", "chosen"),
    [
        (None, None, None, "tr"),
        (None, None, "", "tr"),
        (None, None, "en-US,en;q=0.9", "en"),
        (None, None, "de-DE, en;q=0.5, tr;q=0.8", "tr"),
        (None, None, "fr, de", "tr"),
        (None, None, "en;q=0, tr;q=0.1", "tr"),
        (None, None, "en;q=abc, tr;q=0.2", "tr"),
        (None, None, "en, tr", "en"),
        (None, None, "TR-tr", "tr"),
        (None, "en", "tr-TR", "en"),
        ("tr", "en", "en", "tr"),
        ("EN", None, "tr", "en"),
        ("de", None, "en", "en"),
        ("de", "xx", None, "tr"),
    ],
)
def test_the_language_is_the_query_then_the_cookie_then_the_browser_then_turkish(
    query: str | None, cookie: str | None, header: str | None, chosen: str
) -> None:
    assert languages.choose(query, cookie, header) == chosen


def test_amounts_are_written_from_cldr_the_languages_way() -> None:
    assert languages.amount(123_456, "tr") == "1.234,56 TL"
    assert languages.amount(123_456, "en") == "TRY 1,234.56"
    assert languages.amount(5, "tr") == "0,05 TL"
    assert languages.amount(100_000_000, "en") == "TRY 1,000,000.00"
    assert languages.amount(-550, "tr") == "-5,50 TL"
    with pytest.raises(TypeError):
        languages.amount(12.5, "tr")  # type: ignore[arg-type]


def test_dates_are_written_from_cldr_in_utc() -> None:
    when = datetime(2026, 11, 26, 12, 30, tzinfo=UTC)
    assert languages.moment(when, "tr") == "26 Kasım 2026 12:30"
    assert languages.moment(when, "en") == "November 26, 2026, 12:30\u202fPM"  # CLDR's narrow space
    assert languages.moment(when.replace(tzinfo=None), "tr") == "26 Kasım 2026 12:30"


def test_with_lang_sets_the_one_lang_parameter() -> None:
    assert with_lang("/checkout/x", "en") == "/checkout/x?lang=en"
    assert with_lang("http://h/a?b=1&lang=tr&c=2", "en") == "http://h/a?b=1&c=2&lang=en"


def _session(client: httpx2.Client, **extra: Any) -> dict[str, Any]:
    body = {"transactionId": txn(), "amount": 123_456, "currency": "TRY",
            "returnUrl": f"{client.base_url}{RETURN_PATH}", **extra}  # fmt: skip
    response = client.post("/v1/payments/sessions", json=body)
    assert response.status_code == 201, response.text
    return dict(response.json())


def _html_lang(text: str) -> str:
    found = re.search(r'<html lang="([a-z]+)">', text)
    assert found is not None, text[:200]
    return found.group(1)


def test_a_browser_naming_no_language_gets_turkish(
    client: httpx2.Client, anon: httpx2.Client
) -> None:
    page = anon.get(_session(client)["checkoutUrl"])
    assert page.status_code == 200
    assert _html_lang(page.text) == "tr"
    assert page.headers["content-language"] == "tr"
    assert "1.234,56 TL Öde" in page.text
    assert '<label for="cardNumber">Kart numarası</label>' in page.text
    assert "set-cookie" not in page.headers


def test_an_english_browser_gets_english_and_the_lira_in_cldr_form(
    client: httpx2.Client, anon: httpx2.Client
) -> None:
    url = _session(client)["checkoutUrl"]
    page = anon.get(url, headers={"Accept-Language": "en-GB,en;q=0.9,tr;q=0.5"})
    assert _html_lang(page.text) == "en"
    assert "Pay TRY 1,234.56" in page.text
    assert '<label for="expiry">Expiry (MM/YY)</label>' in page.text
    assert f'action="{url}/pay?lang=en"' in page.text
    # The switcher offers both, each by its own name, the current one marked.
    assert f'href="{url}?lang=tr" lang="tr" hreflang="tr">Türkçe</a>' in page.text
    assert f'href="{url}?lang=en" lang="en" hreflang="en" aria-current="true">English' in page.text


def _options(text: str) -> list[str]:
    found = re.search(r'<select id="installments".*?</select>', text, re.S)
    assert found is not None, "no installment picker on the page"
    return [" ".join(o.split()) for o in re.findall(r"<option[^>]*>(.*?)</option>", found[0], re.S)]


@pytest.mark.parametrize(
    ("lang", "expected"),
    [
        ("tr", {
            1: "Tek çekim: 1.250,50 TL",
            2: "2 taksit × 625,25 TL (toplam 1.250,50 TL)",
            3: "3 taksit: 416,84 TL + 2 × 416,83 TL (toplam 1.250,50 TL)",
            12: "12 taksit: 104,30 TL + 11 × 104,20 TL (toplam 1.250,50 TL)",
        }),
        ("en", {
            1: "Single payment: TRY 1,250.50",
            2: "2 installments of TRY 625.25 (total TRY 1,250.50)",
            3: "3 installments: TRY 416.84 + 2 × TRY 416.83 (total TRY 1,250.50)",
            12: "12 installments: TRY 104.30 + 11 × TRY 104.20 (total TRY 1,250.50)",
        }),
    ],
)  # fmt: skip
def test_every_installment_option_shows_amounts_that_add_up_to_its_total(
    client: httpx2.Client, anon: httpx2.Client, lang: str, expected: dict[int, str]
) -> None:
    def lira(kurus: int) -> str:
        return languages.amount(kurus, lang)

    url = _session(client, amount=125_050, installmentEnabled=True)["checkoutUrl"]
    page = anon.get(url, params={"lang": lang}).text
    options = _options(page)
    assert len(options) == 12
    for count, text in expected.items():
        assert options[count - 1] == text
    for count, text in enumerate(options, start=1):
        parts = split_installments(125_050, count)
        if count > 1:
            shown = f"{lira(parts[0])} + {count - 1} × {lira(parts[-1])}"
            assert (shown if parts[0] != parts[-1] else lira(parts[-1])) in text
            assert lira(125_050) in text
    plan = {"tr": "Tek seferde 1.250,50 TL.", "en": "One payment of TRY 1,250.50."}
    assert f'id="installments-plan" aria-live="polite">{plan[lang]}</p>' in page
    chosen = anon.post(f"{url}/pay", params={"lang": lang}, data={"installments": "12"}).text
    plan = {
        "tr": "İlk taksit 104,30 TL (artan kuruşlar ilk taksite eklenir), ardından 11 taksit × "
        "104,20 TL: toplam 1.250,50 TL.",
        "en": "The first installment is TRY 104.30 (it carries the remaining kuruş), then 11 of "
        "TRY 104.20: TRY 1,250.50 in all.",
    }
    assert f'aria-live="polite">{plan[lang]}</p>' in chosen


def test_the_switchers_choice_is_kept_by_a_cookie(
    client: httpx2.Client, anon: httpx2.Client
) -> None:
    url = _session(client)["checkoutUrl"]
    chosen = anon.get(url, params={"lang": "en"}, headers={"Accept-Language": "tr"})
    assert _html_lang(chosen.text) == "en"
    cookie = chosen.headers["set-cookie"]
    assert cookie.startswith(f"{languages.COOKIE}=en;")
    assert "HttpOnly" in cookie
    assert "samesite=lax" in cookie.lower()
    # The next page, without ?lang=, from a Turkish browser: still English.
    again = anon.get(url, headers={"Accept-Language": "tr"})
    assert _html_lang(again.text) == "en"
    back = anon.get(url, params={"lang": "tr"})
    assert _html_lang(back.text) == "tr"
    assert _html_lang(anon.get(url).text) == "tr"


def test_form_errors_are_in_the_pages_language(client: httpx2.Client, anon: httpx2.Client) -> None:
    url = _session(client, installmentEnabled=True)["checkoutUrl"]
    form = {"cardNumber": "4242424242424242", "expiry": "12/30", "cvc": "123",
            "holder": "Ayşe", "installments": "13"}  # fmt: skip
    english = anon.post(f"{url}/pay", params={"lang": "en"}, data=form)
    assert english.status_code == 400
    assert "Installments go from 1 to 12." in english.text
    assert 'aria-invalid="true"' in english.text
    turkish = anon.post(f"{url}/pay", params={"lang": "tr"}, data=form)
    assert "Taksit sayısı 1 ile 12 arasında olabilir." in turkish.text
    assert _html_lang(turkish.text) == "tr"
    # After a POST the switcher links to the page itself, not to the form's address.
    assert f'href="{url}?lang=en"' in turkish.text


def test_the_language_holds_through_the_challenge_to_the_merchant(
    client: httpx2.Client, anon: httpx2.Client
) -> None:
    url = _session(client)["checkoutUrl"]
    form = {"cardNumber": CHALLENGE_PAN, "expiry": "12/30", "cvc": "123", "holder": "Ayşe"}
    to_acs = anon.post(f"{url}/pay", params={"lang": "en"}, data=form)
    assert to_acs.status_code == 303
    acs_url = to_acs.headers["location"]
    assert parse_qs(urlsplit(acs_url).query)["lang"] == ["en"]
    challenge = anon.get(acs_url, headers={"Accept-Language": "tr"})
    assert _html_lang(challenge.text) == "en"
    assert "Amount: <strong" in challenge.text
    assert "TRY 1,234.56" in challenge.text
    action = re.search(r'<form id="acs" method="post" action="([^"]+)"', challenge.text)
    assert action is not None
    assert action.group(1).endswith("/challenge?lang=en")
    done = anon.post(
        action.group(1).replace("&amp;", "&"),
        data={
            "correlationId": parse_qs(urlsplit(acs_url).query)["correlationId"][0],
            "code": "000000",
        },
    )
    assert "Code not accepted" in done.text
    assert f'action="{url}/3ds-callback?lang=en"' in done.text


def test_the_merchant_return_page_says_why_in_the_buyers_language(anon: httpx2.Client) -> None:
    query = {"outcome": "failed", "errorCode": "SVC-PAY-3002", "lang": "en"}
    english = anon.get(RETURN_PATH, params=query)
    assert _html_lang(english.text) == "en"
    assert "The payment did not go through" in english.text
    assert "The card&#39;s limit is not enough for this payment." in english.text
    anon.cookies.clear()
    turkish = anon.get(RETURN_PATH, params={"outcome": "failed", "errorCode": "SVC-PAY-3003"})
    assert "3D Secure doğrulaması başarısız oldu." in turkish.text


def test_the_expired_page_is_in_the_chosen_language(anon: httpx2.Client) -> None:
    missing = anon.get(
        "/checkout/00000000-0000-0000-0000-000000000000", headers={"Accept-Language": "en"}
    )
    assert missing.status_code == 404
    assert "Checkout not found" in missing.text
    assert _html_lang(missing.text) == "en"


def test_the_merchants_api_errors_stay_in_english(client: httpx2.Client) -> None:
    response = client.post(
        "/v1/payments/sessions",
        json={"transactionId": txn(), "amount": -1, "currency": "TRY"},
        headers={"Accept-Language": "tr-TR"},
    )
    assert response.status_code == 400
    envelope = response.json()
    assert envelope["code"].startswith("SVC-VAL-")
    assert envelope["message"].isascii()
    assert "content-language" not in response.headers


def test_the_catalogue_and_cldr_load_on_the_first_page_not_at_startup(tmp_path: Path) -> None:
    # A fresh process: a sandbox that has started and answered the API has not read Babel.
    script = """
import sys
from pathlib import Path
from workbench.testing import client_for, running_sandbox
folder = Path(sys.argv[1])
with running_sandbox(db_dir=folder, run_reconciler_in_background=False) as server:
    with client_for(server) as client:
        client.payments.charge_card(
            transaction_id="lazy-1", amount=100, card_token="tok_test_success"
        )
        print("babel" in sys.modules)
        import httpx2
        httpx2.get(server.base_url + "/checkout/00000000-0000-0000-0000-000000000000")
        print("babel" in sys.modules)
"""
    done = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path)],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["False", "True"]
