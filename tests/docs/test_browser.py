"""Headless Chromium reads the built guide from loopback: no error, no request off the machine.

Each page is loaded once for every browser check of the guide (`tests.docs.visits`,
the `visits` fixture); the tests here assert what its load showed. Two tests interact
with Home in a browser of this module's own.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from tests.chromium import chromium
from tests.docs.visits import (
    CHECKED_PAGES,
    LOCAL_SCHEMES,
    SCREENSHOTS,
    STATE_MACHINES,
    WIDE,
    Visit,
    spare_mermaid,
)

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    with chromium("the browser checks of the guide") as launched:
        yield launched


@pytest.mark.parametrize(("path", "heading"), CHECKED_PAGES)
def test_page_renders_locally_without_errors(
    visits: dict[tuple[str, int], Visit], path: str, heading: str | None
) -> None:
    visit = visits[(path, WIDE["width"])]
    if visit.raised is not None:
        raise visit.raised
    seen = visit.seen
    assert seen["off_host"] == [], "requests left the machine"
    assert seen["failed"] == [], "requests failed"
    assert seen["status"] == [], "error responses"
    assert seen["console"] == [], "console errors"
    assert visit.heading, "no main heading"
    if heading is not None:
        assert visit.heading == heading
    if path == STATE_MACHINES:
        assert visit.diagrams == 5


def test_palette_toggle_switches_to_dark(browser: object, site: Path, site_url: str) -> None:
    from playwright.sync_api import Browser

    assert isinstance(browser, Browser)
    context = browser.new_context(color_scheme="light")
    spare_mermaid(context, site, "")
    try:
        page = context.new_page()
        page.goto(site_url, wait_until="networkidle")
        body = page.locator("body")
        assert body.get_attribute("data-md-color-scheme") == "default"
        page.locator("label.md-header__button[for^='__palette']:visible").first.click()
        page.wait_for_function("document.body.dataset.mdColorScheme === 'slate'")
        assert body.get_attribute("data-md-color-scheme") == "slate"
        page.screenshot(path=str(SCREENSHOTS / "home-dark.png"))
    finally:
        context.close()


def test_search_answers_from_the_local_index(browser: object, site: Path, site_url: str) -> None:
    from playwright.sync_api import Browser, Request

    assert isinstance(browser, Browser)
    context = browser.new_context(viewport=WIDE)
    spare_mermaid(context, site, "")
    off_host: list[str] = []

    def on_request(request: Request) -> None:
        parts = urlsplit(request.url)
        if parts.scheme not in LOCAL_SCHEMES and parts.hostname != "127.0.0.1":
            off_host.append(request.url)

    try:
        page = context.new_page()
        page.on("request", on_request)
        page.goto(site_url, wait_until="networkidle")
        search = page.locator("input.md-search__input")
        search.click()
        # Material searches on key events, which fill() does not send.
        page.keyboard.type("kuru", delay=30)
        results = page.locator("li.md-search-result__item")
        results.first.wait_for(timeout=10_000)
        assert "kuruş" in results.first.inner_text().lower()
        # The results fade in; the screenshot shows them as they end up.
        page.screenshot(path=str(SCREENSHOTS / "search.png"), animations="disabled")
    finally:
        context.close()
    assert off_host == []


def _overlap(a: list[float], b: list[float], slack: float = 1.0) -> bool:
    return (
        a[0] + slack < b[2] and b[0] + slack < a[2] and a[1] + slack < b[3] and b[1] + slack < a[3]
    )


def test_state_diagrams_are_readable_at_the_page_width(
    visits: dict[tuple[str, int], Visit],
) -> None:
    """No diagram is shrunk to fit, and no two labels (or a label and a state) overlap."""
    visit = visits[(STATE_MACHINES, WIDE["width"])]
    if visit.raised is not None:
        raise visit.raised
    measured = visit.diagram_sizes
    assert measured is not None
    assert len(measured) == 5
    problems = []
    for index, diagram in enumerate(measured, start=1):
        assert diagram is not None, f"diagram {index} has no drawing"
        if diagram["scale"] < 0.9:
            problems.append(f"diagram {index} shrunk to {diagram['scale']:.2f} of its size")
        if diagram["height"] < 150:
            problems.append(f"diagram {index} squeezed to {diagram['height']:.0f} px high")
        labels = diagram["labels"]
        for i, a in enumerate(labels):
            problems.extend(
                f"diagram {index}: label {a['text']!r} overlaps label {b['text']!r}"
                for b in labels[i + 1 :]
                if _overlap(a["box"], b["box"])
            )
            problems.extend(
                f"diagram {index}: label {a['text']!r} overlaps state {s['text']!r}"
                for s in diagram["states"]
                if _overlap(a["box"], s["box"])
            )
    assert problems == []
