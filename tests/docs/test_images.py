"""Every picture of the built guide can be read: text at least 11 px as drawn, and a text
alternative saying what it shows.

Chromium opens every page of the guide at desktop width (several at once, one browser)
and measures, as the page draws them:

- an ``<img>``: its ``alt`` (not empty, not nbconvert's "No description has been
  provided"); the smallest text of an SVG source (its ``font-size``s, decoded from the
  file or the ``data:`` address) times the scale the page draws it at; for a screenshot
  of ``docs/images/screenshots/``, the smallest text ``tools.screenshots`` recorded in
  its manifest, times that scale;
- an inline ``<svg>`` with text (a notebook's state path, a Mermaid diagram in its
  shadow root): each text's font size times the drawing's scale on screen;
- an element with ``role="img"``: its ``aria-label``.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any
from urllib.parse import urljoin

import pytest

from tests.chromium import CHROMIUM, CHROMIUM_ARGS
from tests.docs.site import MERMAID, draws_diagrams
from tests.paths import ROOT

pytestmark = pytest.mark.browser

#: The smallest text a picture may draw, in CSS px.
MIN_TEXT_PX = 11.0
#: Pages measured at once.
AT_ONCE = 4
#: Not fetched: the search index (its worker lays out no page and draws no picture).
NOT_FETCHED = "**/search/*"
NO_DESCRIPTION = "No description has been provided"
MANIFEST = ROOT / "docs" / "images" / "screenshots" / "manifest.json"
#: Every recorded picture: Home's (tools.screenshots) and the two languages' (tools.hosted_shots).
MANIFESTS = (MANIFEST, ROOT / "docs" / "sandbox" / "hosted-pages" / "manifest.json")


def _recorded() -> dict[str, Any]:
    """Each screenshot's size and smallest text, by file name, from every manifest."""
    found: dict[str, Any] = {}
    for manifest in MANIFESTS:
        found.update(json.loads(manifest.read_text(encoding="utf-8")))
    return found


# Material draws each Mermaid diagram in a closed shadow root; opened here to measure it.
OPEN_SHADOW_ROOTS = """
const attach = Element.prototype.attachShadow;
Element.prototype.attachShadow = function (init) {
  return attach.call(this, {...init, mode: "open"});
};
"""
DIAGRAMS_DRAWN = """() => {
  const divs = [...document.querySelectorAll('div.mermaid')];
  return document.querySelectorAll('pre.mermaid').length === 0 &&
    divs.every(d => d.shadowRoot && d.shadowRoot.querySelector('svg'));
}"""
# Every tab of a tabbed block is shown, so that the pictures of hidden tabs are measured.
SHOW_TABS = ".tabbed-set > .tabbed-content > .tabbed-block { display: block !important; }"
MEASURE = """async () => {
  const article = document.querySelector('article');
  const found = [];
  const svgFonts = text => {
    const sizes = [...text.matchAll(/font-size[=:]\\s*['"]?([0-9.]+)/g)].map(m => parseFloat(m[1]));
    const hasText = /<text[\\s>]/.test(text);
    return hasText ? (sizes.length ? Math.min(...sizes) : 16) : null;
  };
  for (const img of article.querySelectorAll('img')) {
    const shown = img.getBoundingClientRect().width;
    const item = {kind: 'img', src: img.getAttribute('src').slice(0, 80),
                  alt: img.getAttribute('alt'), shown, natural: img.naturalWidth};
    const src = img.currentSrc || img.src;
    if (src.startsWith('data:image/svg+xml') || src.split('?')[0].endsWith('.svg')) {
      const text = await (await fetch(src)).text();
      const svg = new DOMParser().parseFromString(text, 'image/svg+xml').documentElement;
      const width = parseFloat(svg.getAttribute('width')) ||
        (svg.viewBox && svg.viewBox.baseVal ? svg.viewBox.baseVal.width : img.naturalWidth);
      const font = svgFonts(text);
      item.smallest = font === null ? null : font * shown / width;
    } else {
      item.file = src.split('/').pop().split('?')[0];
    }
    found.push(item);
  }
  const drawings = [...article.querySelectorAll('svg')].map(svg => ({svg, root: 'page'}));
  for (const div of article.querySelectorAll('div.mermaid')) {
    const svg = div.shadowRoot && div.shadowRoot.querySelector('svg');
    if (svg) drawings.push({svg, root: 'mermaid'});
  }
  for (const {svg, root} of drawings) {
    const parts = 'text, foreignObject span, foreignObject p, foreignObject div';
    const texts = [...svg.querySelectorAll(parts)]
      .filter(t => t.textContent.trim() && t.getBoundingClientRect().width > 0);
    if (!texts.length) continue;
    const box = svg.viewBox && svg.viewBox.baseVal;
    const scale = box && box.width ? svg.getBoundingClientRect().width / box.width : 1;
    const sizes = texts.map(t => parseFloat(getComputedStyle(t).fontSize) * scale);
    const labelled = svg.closest('[role=img]') || svg;
    found.push({kind: root === 'mermaid' ? 'mermaid' : 'svg', smallest: Math.min(...sizes),
                alt: labelled.getAttribute('aria-label') ||
                     (svg.querySelector('title') || {}).textContent || null,
                text: texts[0].textContent.trim().slice(0, 40)});
  }
  for (const el of article.querySelectorAll('[role=img]:not(svg)')) {
    found.push({kind: 'role-img', alt: el.getAttribute('aria-label')});
  }
  return found;
}"""


def _pages(site: Path) -> list[str]:
    pages = []
    for index in sorted(site.rglob("index.html")):
        path = index.parent.relative_to(site).as_posix()
        if path.startswith(("assets", "search")) or path == "404":
            continue
        pages.append("" if path == "." else f"{path}/")
    return pages


async def _measure_all(
    base: str, paths: list[str], diagrams: set[str]
) -> dict[str, list[dict[str, Any]]]:
    """Each page's pictures; the paths in ``diagrams`` are the pages that draw diagrams."""
    from playwright.async_api import Route, async_playwright

    async def no_mermaid(route: Route) -> None:
        await route.fulfill(status=200, content_type="text/javascript", body="")

    async def not_fetched(route: Route) -> None:
        await route.abort()

    results: dict[str, list[dict[str, Any]]] = {}
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(
            executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS
        )
        context = await browser.new_context(viewport={"width": 1280, "height": 900})
        await context.add_init_script(OPEN_SHADOW_ROOTS)
        # The search index draws no picture: without it no page builds the search
        # worker's index (0.6 CPU-s a page, a quarter of loading one).
        await context.route(NOT_FETCHED, not_fetched)
        limit = asyncio.Semaphore(AT_ONCE)

        async def one(path: str) -> None:
            async with limit:
                page = await context.new_page()
                if path not in diagrams:  # mermaid draws nothing there: not parsed for nothing
                    await page.route(MERMAID, no_mermaid)
                try:
                    await page.goto(urljoin(base, path), wait_until="networkidle")
                    if await page.locator(".mermaid").count():
                        await page.wait_for_function(DIAGRAMS_DRAWN, timeout=20_000)
                    await page.add_style_tag(content=SHOW_TABS)
                    results[path] = await page.evaluate(MEASURE)
                finally:
                    await page.close()

        try:
            await asyncio.gather(*(one(p) for p in paths))
        finally:
            await browser.close()
    return results


@pytest.fixture(scope="module")
def measured(site: Path, site_url: str) -> dict[str, list[dict[str, Any]]]:
    if not CHROMIUM.is_file():
        reason = f"{CHROMIUM} is missing: `make browser` installs it from the system packages"
        print(f"skipping the guide's picture checks: {reason}")
        pytest.skip(reason)
    pages = _pages(site)
    diagrams = {path for path in pages if draws_diagrams(site, path)}
    results = asyncio.run(_measure_all(site_url, pages, diagrams))
    pictures = [p for items in results.values() for p in items]
    counts = {kind: sum(1 for p in pictures if p["kind"] == kind) for kind in
              ("img", "svg", "mermaid", "role-img")}  # fmt: skip
    manifest = _recorded()
    for picture in pictures:
        shot = manifest.get(picture.get("file", ""))
        if shot is not None and picture["natural"]:
            picture["smallest"] = shot["smallestText"] * picture["shown"] / picture["natural"]
    sizes = sorted(round(p["smallest"], 1) for p in pictures if p.get("smallest") is not None)
    print(f"pictures measured on {len(results)} pages: {counts}; text sizes drawn (px): {sizes}")
    return results


def test_every_picture_says_what_it_shows(measured: dict[str, list[dict[str, Any]]]) -> None:
    missing = [
        f"{path}: {item['kind']} {item.get('src') or item.get('text') or ''}"
        for path, items in measured.items()
        for item in items
        if not (item.get("alt") or "").strip() or NO_DESCRIPTION in (item.get("alt") or "")
    ]
    assert missing == []
    assert sum(1 for items in measured.values() for i in items if i["kind"] == "img") >= 5


def test_every_picture_draws_its_text_at_least_11_px(
    measured: dict[str, list[dict[str, Any]]],
) -> None:
    manifest = _recorded()
    small, unknown = [], []
    for path, items in measured.items():
        for item in items:
            if item["kind"] == "role-img":
                continue
            smallest = item.get("smallest")
            if item["kind"] == "img" and "file" in item and item["file"] not in manifest:
                unknown.append(f"{path}: {item['file']} (no recorded text size)")
                continue
            if smallest is None:
                continue  # a drawing without text
            if smallest < MIN_TEXT_PX:
                what = item.get("file") or item.get("src") or item.get("text")
                small.append(f"{path}: {item['kind']} {what}: text drawn at {smallest:.1f} px")
    assert unknown == []
    assert small == []


def test_every_hosted_page_has_its_screenshots_at_both_widths() -> None:
    """`make docs-gen` left a picture per hosted page and width, as its manifest says."""
    from tools.screenshots import FOLDER, PAGES, WIDTHS, png_size

    manifest = json.loads(MANIFEST.read_text(encoding="utf-8"))
    expected = {f"{page}-{width}.png" for page in PAGES for width in WIDTHS}
    assert set(manifest) == expected
    for name, shot in manifest.items():
        width, height = png_size(FOLDER / name)
        assert (width, height) == (shot["width"], shot["height"]), name
        assert shot["smallestText"] >= MIN_TEXT_PX, name
        if name.endswith("-phone.png"):
            assert width == WIDTHS["phone"][0], name
    home = (ROOT / "docs" / "index.md").read_text(encoding="utf-8")
    for page in PAGES:
        assert f"images/screenshots/{page}-desktop.png" in home, page
