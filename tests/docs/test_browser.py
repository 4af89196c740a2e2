"""Headless Chromium reads the built guide from loopback: no error, no request off the machine.

The pages load side by side (`AT_ONCE` tabs, each in a context of its own), then each is
read in turn: most of the wait for a page is the network going quiet.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urljoin, urlsplit

import pytest

from tests.chromium import chromium
from tests.docs.site import MERMAID, draws_diagrams
from tests.paths import ROOT

SCREENSHOTS = ROOT / "artifacts" / "screenshots" / "docs"
LOCAL_SCHEMES = {"data", "blob", "about"}
RENDERED_DIAGRAMS = (
    "[...document.querySelectorAll('div.mermaid')]"
    ".filter(e => e.getBoundingClientRect().height > 50).length"
)
#: Pages loading at once (each in a tab and context of its own).
AT_ONCE = 6
#: The search index, from the site's root.
SEARCH_INDEX = "search/search_index.json"

pytestmark = pytest.mark.browser

# (page path, its main heading)
PAGES = [
    ("", "Payments Workbench"),
    ("reference/", "Reference"),
    ("concepts/state-machines/", "State machines"),
    ("concepts/signing/", "Request signing"),
    ("errors/", "Errors"),
    ("flows/", "Flows"),
    ("production/", "What to rely on in production"),
    ("concepts/signing-without-python/", "Signing without Python"),
    ("sandbox/test-cards/", "Test cards"),
    ("reference/client/", "Client"),
    ("reference/client/resources/", "Resources"),
    ("reference/client/models/", "Models"),
    ("reference/client/exceptions/", "Errors and retries"),
    ("reference/client/tracking/", "Tracking and waiting"),
    ("reference/client/pagination/", "Pagination"),
    ("reference/client/testing/", "Testing your integration"),
    ("contributing/internals/", "Internals"),
]


def _notebook_pages() -> list[tuple[str, str | None]]:
    return [(f"notebooks/{p.stem}/", None) for p in sorted((ROOT / "notebooks").glob("*.ipynb"))]


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    with chromium("the browser checks of the guide") as launched:
        yield launched


@dataclass
class _Visit:
    """One page opened in a browser context of its own, and what went wrong there."""

    url: str
    context: Any
    page: Any
    seen: dict[str, list[str]] = field(default_factory=dict)
    raised: BaseException | None = None


def _empty_index(site: Path) -> str:
    """The site's search index with its configuration and no documents."""
    index = json.loads((site / SEARCH_INDEX).read_text(encoding="utf-8"))
    return json.dumps({**index, "docs": []})


def _open(browser: object, url: str, draws_diagrams: bool, index: str | None = None) -> _Visit:
    """Start loading ``url`` in a new context, recording what goes wrong from the first
    request on; returns once the answer starts, so that several pages load side by side.

    With ``index``, the page's search worker is given that index instead of the site's."""
    from playwright.sync_api import Browser, ConsoleMessage, Request, Response, Route

    assert isinstance(browser, Browser)
    seen: dict[str, list[str]] = {"console": [], "failed": [], "off_host": [], "status": []}
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    if index is not None:
        # Every page's search worker builds its index from the whole site's text, a
        # quarter of the CPU of loading a page: the same file each time. Home loads the
        # real one; the other pages' workers still start and load an index, of no pages.
        def small_index(route: Route) -> None:
            route.fulfill(status=200, content_type="application/json", body=index)

        context.route(f"**/{SEARCH_INDEX}", small_index)
    if not draws_diagrams:
        # A page without a diagram never runs mermaid (Material only calls it for a
        # diagram): an empty script instead of 3.5 MB to parse. The pages with diagrams
        # load the real one, and every request is still checked for its host.
        def no_mermaid(route: Route) -> None:
            route.fulfill(status=200, content_type="text/javascript", body="")

        context.route(MERMAID, no_mermaid)
    page = context.new_page()

    def on_console(message: ConsoleMessage) -> None:
        if message.type == "error":
            seen["console"].append(message.text)

    def on_request(request: Request) -> None:
        parts = urlsplit(request.url)
        if parts.scheme not in LOCAL_SCHEMES and parts.hostname != "127.0.0.1":
            seen["off_host"].append(request.url)

    def on_failed(request: Request) -> None:
        seen["failed"].append(f"{request.url}: {request.failure}")

    def on_response(response: Response) -> None:
        if response.status >= 400:
            seen["status"].append(f"{response.status} {response.url}")

    page.on("console", on_console)
    page.on("pageerror", lambda error: seen["console"].append(str(error)))
    page.on("request", on_request)
    page.on("requestfailed", on_failed)
    page.on("response", on_response)
    visit = _Visit(url, context, page, seen)
    try:
        page.goto(url, wait_until="commit")
    except Exception as exc:  # reported by the page's own test
        visit.raised = exc
    return visit


def _settle(visit: _Visit, screenshot: Path) -> None:
    """Wait for the page to settle, then read its heading, diagrams, screenshot, downloads."""
    page, seen, url = visit.page, visit.seen, visit.url
    page.wait_for_load_state("networkidle")
    heading = page.locator("article.md-content__inner h1").first
    seen["heading"] = [heading.inner_text(timeout=10_000).rstrip("¶").strip()]
    if "state-machines" in url:
        # Material swaps each <pre class="mermaid"> for a <div> holding the drawing in a
        # closed shadow root: count the swapped, non-empty ones.
        page.wait_for_function(RENDERED_DIAGRAMS + " >= 5", timeout=20_000)
        seen["diagrams"] = [str(page.evaluate(RENDERED_DIAGRAMS))]
    screenshot.parent.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(screenshot))
    if url.rstrip("/").endswith("flows"):
        for href in page.locator("a[download]").evaluate_all("els => els.map(e => e.href)"):
            status = page.request.get(href).status
            if status != 200:
                seen["status"].append(f"{status} {href}")


def _screenshot_name(path: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", path.lower()).strip("-") or "home"


@pytest.fixture(scope="module")
def visits(browser: object, site: Path, site_url: str) -> dict[str, _Visit]:
    """Every page of the checks, `AT_ONCE` loading side by side, each in its own context."""
    paths = [path for path, _ in PAGES + _notebook_pages()]
    index = _empty_index(site)
    done: dict[str, _Visit] = {}
    for start in range(0, len(paths), AT_ONCE):
        batch = paths[start : start + AT_ONCE]
        opened = [
            (
                path,
                _open(
                    browser,
                    urljoin(site_url, path),
                    draws_diagrams(site, path),
                    index=None if path == "" else index,
                ),
            )
            for path in batch
        ]
        for path, visit in opened:
            try:
                if visit.raised is None:
                    _settle(visit, SCREENSHOTS / f"{_screenshot_name(path)}.png")
            except Exception as exc:  # reported by the page's own test
                visit.raised = exc
            finally:
                visit.context.close()
            done[path] = visit
    return done


@pytest.mark.parametrize(("path", "heading"), PAGES + _notebook_pages())
def test_page_renders_locally_without_errors(
    visits: dict[str, _Visit], path: str, heading: str | None
) -> None:
    visit = visits[path]
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


# Material draws each diagram in a closed shadow root; opened here so the test can measure.
OPEN_SHADOW_ROOTS = """
const attach = Element.prototype.attachShadow;
Element.prototype.attachShadow = function (init) {
  return attach.call(this, {...init, mode: "open"});
};
"""
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
