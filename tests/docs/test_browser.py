"""Headless Chromium reads the built guide from loopback: no error, no request off the machine.

Each page is read once for every check of the guide's pages (`tests.docs.reading`: the
pages load side by side, each in a context of its own); the checks below that need a
page of their own (the palette, the search, the diagrams' sizes) open it in a browser of
this module.
"""

from __future__ import annotations

from collections.abc import Iterator
from urllib.parse import urljoin, urlsplit

import pytest

from tests.chromium import chromium
from tests.docs.reading import (
    LOCAL_SCHEMES,
    NOTEBOOK_PAGES,
    OPEN_SHADOW_ROOTS,
    PAGES,
    RENDERED_DIAGRAMS,
    SCREENSHOTS,
    Read,
)

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def browser(guide_reads: dict[str, Read]) -> Iterator[object]:
    # After the pages' reading, whose own Chromium has closed: one sync Playwright at a time.
    with chromium("the browser checks of the guide") as launched:
        yield launched


@pytest.mark.parametrize(("path", "heading"), PAGES + NOTEBOOK_PAGES)
def test_page_renders_locally_without_errors(
    guide_reads: dict[str, Read], path: str, heading: str | None
) -> None:
    visit = guide_reads[path]
    if visit.raised is not None:
        raise visit.raised
    seen = visit.seen
    assert seen["off_host"] == [], "requests left the machine"
    assert seen["failed"] == [], "requests failed"
    assert seen["status"] == [], "error responses"
    assert seen["console"] == [], "console errors"
    assert seen["heading"][0], "no main heading"
    if heading is not None:
        assert seen["heading"] == [heading]
    if "diagrams" in seen:
        assert seen["diagrams"] == ["5"]


def test_palette_toggle_switches_to_dark(browser: object, site_url: str) -> None:
    from playwright.sync_api import Browser

    assert isinstance(browser, Browser)
    context = browser.new_context(color_scheme="light")
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


def test_search_answers_from_the_local_index(browser: object, site_url: str) -> None:
    from playwright.sync_api import Browser, Request

    assert isinstance(browser, Browser)
    context = browser.new_context(viewport={"width": 1280, "height": 900})
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
        page.screenshot(path=str(SCREENSHOTS / "search.png"))
    finally:
        context.close()
    assert off_host == []


MEASURE_DIAGRAMS = """
() => [...document.querySelectorAll('div.mermaid')].map(div => {
  const svg = div.shadowRoot && div.shadowRoot.querySelector('svg');
  if (!svg) return null;
  const shown = svg.getBoundingClientRect();
  const box = svg.viewBox.baseVal;
  const rect = e => {
    const r = e.getBoundingClientRect();
    return [r.left, r.top, r.right, r.bottom];
  };
  const labels = [...svg.querySelectorAll('g.edgeLabel')]
    .filter(e => e.textContent.trim() && e.getBoundingClientRect().width > 0)
    .map(e => ({text: e.textContent.trim(), box: rect(e)}));
  const states = [...svg.querySelectorAll('g.node')]
    .map(e => ({text: e.textContent.trim(), box: rect(e)}));
  const scale = box && box.width ? shown.width / box.width : 1;
  return {scale, height: shown.height, labels, states};
})
"""


def _overlap(a: list[float], b: list[float], slack: float = 1.0) -> bool:
    return (
        a[0] + slack < b[2] and b[0] + slack < a[2] and a[1] + slack < b[3] and b[1] + slack < a[3]
    )


def test_state_diagrams_are_readable_at_the_page_width(browser: object, site_url: str) -> None:
    """No diagram is shrunk to fit, and no two labels (or a label and a state) overlap."""
    from playwright.sync_api import Browser

    assert isinstance(browser, Browser)
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    try:
        page = context.new_page()
        page.add_init_script(OPEN_SHADOW_ROOTS)
        page.goto(urljoin(site_url, "concepts/state-machines/"), wait_until="networkidle")
        page.wait_for_function(RENDERED_DIAGRAMS + " >= 5", timeout=20_000)
        measured = page.evaluate(MEASURE_DIAGRAMS)
        for index, element in enumerate(page.locator("div.mermaid").all()):
            element.screenshot(path=str(SCREENSHOTS / f"state-diagram-{index + 1}.png"))
    finally:
        context.close()
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
