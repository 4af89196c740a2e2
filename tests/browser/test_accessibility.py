"""The hosted pages work without a mouse and say what each control is, in both languages.

For the checkout page (with its installment picker) and the 3-D Secure page, in Turkish
and in English: every control has an accessible name (a label, ``aria-label`` or its
text) in the page's language, the Tab key visits every focusable control in reading
order, and nothing overflows a phone-width screen.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from tests.browser.buyer import CHALLENGE, LABELS, fill_card

pytestmark = pytest.mark.browser

# Focusable controls in DOM order, with the name a screen reader would announce.
_CONTROLS = """() => [...document.querySelectorAll(
    'a[href], button, input:not([type=hidden]), select, textarea, [tabindex]')]
  .filter(e => !e.disabled && e.tabIndex >= 0 && e.getClientRects().length > 0)
  .map((e, i) => {
    if (!e.dataset.a11y) e.dataset.a11y = String(i);
    const label = e.labels && e.labels.length ? e.labels[0].innerText : '';
    const byId = (e.getAttribute('aria-labelledby') || '').split(' ')
      .map(id => document.getElementById(id)).filter(Boolean).map(x => x.innerText).join(' ');
    const text = ['A', 'BUTTON'].includes(e.tagName) ? e.innerText : '';
    return {key: e.dataset.a11y, tag: e.tagName,
            name: (label || e.getAttribute('aria-label') || byId || text || '').trim()};
  })"""
_FOCUSED = "() => document.activeElement && document.activeElement.dataset.a11y || null"
_OVERFLOW = "() => document.documentElement.scrollWidth - window.innerWidth"


def _check(page: Any) -> list[str]:
    """Assert the three properties on the current page; return the controls' names."""
    controls = page.evaluate(_CONTROLS)
    assert controls, "no focusable control on the page"
    nameless = [c["tag"] for c in controls if not c["name"]]
    assert not nameless, f"controls without an accessible name: {nameless}"
    page.evaluate("() => document.activeElement && document.activeElement.blur()")
    visited = []
    for _ in controls:
        page.keyboard.press("Tab")
        visited.append(page.evaluate(_FOCUSED))
    assert visited == [c["key"] for c in controls]
    assert page.evaluate(_OVERFLOW) <= 0, "the page is wider than a phone screen"
    return [c["name"] for c in controls]


@pytest.mark.parametrize("language", ["tr", "en"])
def test_checkout_and_3ds_pages_by_keyboard_alone(
    new_session: Callable[..., Any], page: Any, language: str
) -> None:
    labels = LABELS[language]
    session = new_session(installment_enabled=True)
    page.goto(session.checkout_url)
    assert page.locator("html").get_attribute("lang") == language
    names = _check(page)
    assert {labels[k] for k in ("number", "expiry", "cvc", "installments")} <= set(names)
    assert {"Türkçe", "English"} <= set(names)  # the switcher, reachable by keyboard

    # Fill and pay without the mouse: the last field's Enter submits the form.
    fill_card(page, CHALLENGE, language)
    page.get_by_label(labels["holder"]).press("Enter")
    page.wait_for_url("**/sandbox/acs/**")
    assert page.locator("html").get_attribute("lang") == language
    assert labels["code"] in _check(page)
    page.get_by_label(labels["code"]).fill("123456")
    page.keyboard.press("Enter")
    page.wait_for_url("**/orders/return?*")
    assert "outcome=success" in page.url
