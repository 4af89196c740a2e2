"""The hosted pages in the buyer's language, in Chromium at phone width.

A Turkish browser gets Turkish pages, an English one English pages; the switcher changes
the language and the choice holds through the card form, the 3-D Secure challenge and
the (demo) merchant's return page; form errors and decline reasons read in the page's
language. Screenshots of each step go to ``artifacts/screenshots`` for review.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from tests.browser.buyer import APPROVED, CHALLENGE, DECLINED, LABELS, fill_card
from tests.browser.screenshots import Shots
from workbench import Client
from workbench.sandbox.merchant_return import RETURN_PATH

pytestmark = pytest.mark.browser

_OVERFLOW = "() => document.documentElement.scrollWidth - window.innerWidth"
#: What each language says for: the pay button, a refused card number, a declined card.
SAYS = {
    "tr": {"pay": "1.234,56 TL Öde", "bad_number": "Kart numarası geçersiz.",
           "failed": "Ödeme gerçekleşmedi",
           "declined": "Kartınız bankanız tarafından onaylanmadı. Başka bir kartla deneyin.",
           "alert": "Lütfen formu kontrol edin"},
    "en": {"pay": "Pay TRY 1,234.56", "bad_number": "The card number is not valid.",
           "failed": "The payment did not go through",
           "declined": "Your bank declined the card. Try another card.",
           "alert": "Please check the form"},
}  # fmt: skip


def _lang(page: Any) -> str:
    return str(page.locator("html").get_attribute("lang"))


def _demo_return(client: Client) -> str:
    return f"{client.base_url}{RETURN_PATH}"


@pytest.mark.parametrize("language", ["tr", "en"])
def test_a_refused_card_and_a_decline_read_in_the_browsers_language(
    new_session: Callable[..., Any], client: Client, page: Any, language: str, shot: Shots
) -> None:
    says = SAYS[language]
    page.goto(new_session(return_url=_demo_return(client)).checkout_url)
    assert _lang(page) == language
    assert page.get_by_role("button", name=says["pay"]).is_visible()
    fill_card(page, "4242 4242 4242 4241", language)  # fails Luhn: the service refuses it
    page.get_by_label(LABELS[language]["holder"]).press("Enter")
    alert = page.get_by_role("alert")
    assert says["alert"] in alert.inner_text()
    assert says["bad_number"] in alert.inner_text()
    assert page.get_by_label(LABELS[language]["number"]).get_attribute("aria-invalid") == "true"
    assert page.evaluate(_OVERFLOW) <= 0
    shot(page, f"refused-{language}")

    fill_card(page, DECLINED, language)
    page.get_by_role("button", name=says["pay"]).click()
    page.wait_for_url(f"**{RETURN_PATH}?*")
    assert _lang(page) == language
    assert page.get_by_test_id("heading").inner_text() == says["failed"]
    assert page.get_by_test_id("reason").inner_text() == says["declined"]
    assert page.get_by_test_id("error-code").inner_text() == "SVC-PAY-3001"
    assert page.evaluate(_OVERFLOW) <= 0
    shot(page, f"declined-{language}")


def test_the_switcher_changes_the_language_and_it_holds_to_the_merchant(
    new_session: Callable[..., Any], client: Client, chromium: Any, shot: Shots
) -> None:
    # A Turkish phone: the page starts in Turkish; the buyer switches to English.
    context = chromium.new_context(viewport={"width": 390, "height": 844}, locale="tr-TR")
    context.set_default_timeout(10_000)
    try:
        page = context.new_page()
        page.goto(new_session(return_url=_demo_return(client)).checkout_url)
        assert _lang(page) == "tr"
        switcher = page.get_by_role("navigation", name="Dil")
        assert switcher.get_by_role("link", name="Türkçe").get_attribute("aria-current") == "true"
        shot(page, "switcher-tr")
        switcher.get_by_role("link", name="English").click()
        page.wait_for_url("**lang=en")
        assert _lang(page) == "en"
        english = page.get_by_role("navigation", name="Language")
        assert english.get_by_role("link", name="English").get_attribute("aria-current") == "true"
        shot(page, "switcher-en")

        fill_card(page, CHALLENGE, "en")
        page.get_by_role("button", name=SAYS["en"]["pay"]).click()
        page.wait_for_url("**/sandbox/acs/**")
        assert _lang(page) == "en"
        assert page.get_by_role("heading", name="Confirm this payment").is_visible()
        shot(page, "challenge-en")
        page.get_by_label(LABELS["en"]["code"]).fill("123456")
        page.get_by_role("button", name="Confirm").click()
        page.wait_for_url(f"**{RETURN_PATH}?*")
        # The merchant's returnUrl carries no lang: the switcher's cookie kept the choice.
        assert "lang=" not in page.url
        assert _lang(page) == "en"
        assert page.get_by_test_id("outcome").inner_text() == "success"
        shot(page, "returned-en")

        # And back to Turkish from the switcher of the next checkout.
        page.goto(new_session().checkout_url)
        assert _lang(page) == "en"
        page.get_by_role("link", name="Türkçe").click()
        page.wait_for_url("**lang=tr")
        assert _lang(page) == "tr"
        fill_card(page, APPROVED, "tr")
        assert page.get_by_role("button", name=SAYS["tr"]["pay"]).is_visible()
    finally:
        context.close()
