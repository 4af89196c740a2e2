"""The built guide in headless Chromium: each page loaded once per width, read for every check.

Four test modules read the same pages: test_browser (no error, no request off the
machine, the main heading, a screenshot, the state diagrams), test_images (the
pictures), test_notebook_pages (the notebook pages' layout at 1280 and 390 px, the
errors page's table) and test_code_blocks (every other page's code blocks at 1280 px,
then, in the same tab narrowed, at 390 px). `visit_all` loads each page of `plan` once,
in a tab of its own, and reads there everything the four check; the tests only assert.

The tabs of one width share a browser context: a page loaded in a context of its own
cost Chromium twice the CPU of one loaded beside the others. `AT_ONCE` pages load side
by side: the next page starts loading as soon as the oldest has been read, so that
Chromium works on several while Python waits on one. Two routes spare Chromium work no
check reads: a page without a diagram gets an empty script for mermaid (3.5 MB Material
runs only for a diagram), and every page but Home gets a search index of no documents
(each page's search worker builds its index from the whole site).
"""

from __future__ import annotations

import json
import re
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urljoin, urlsplit

from tests.docs import article
from tests.docs.site import MERMAID, draws_diagrams
from tests.paths import ROOT

SCREENSHOTS = ROOT / "artifacts" / "screenshots" / "docs"
#: Pages loading at once (each in a tab of its own).
AT_ONCE = 6
#: The search index, from the site's root.
SEARCH_INDEX = "search/search_index.json"
LOCAL_SCHEMES = {"data", "blob", "about"}
WIDE = {"width": 1280, "height": 900}
PHONE = {"width": 390, "height": 844}

NOTEBOOK_PAGES = [f"notebooks/{p.stem}/" for p in sorted((ROOT / "notebooks").glob("*.ipynb"))]
#: The pages test_browser reads for errors, with their main heading (None: any heading).
CHECKED_PAGES: list[tuple[str, str | None]] = [
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
    ("reference/client/webhooks/", "Webhooks"),
    ("reference/client/tracking/", "Tracking and waiting"),
    ("reference/client/pagination/", "Pagination"),
    ("reference/client/testing/", "Testing your integration"),
    ("contributing/internals/", "Internals"),
    *((path, None) for path in NOTEBOOK_PAGES),
]
STATE_MACHINES = "concepts/state-machines/"
ERRORS = "errors/"
FLOWS = "flows/"

# Material draws each Mermaid diagram in a closed shadow root; opened here to measure it.
OPEN_SHADOW_ROOTS = """
const attach = Element.prototype.attachShadow;
Element.prototype.attachShadow = function (init) {
  return attach.call(this, {...init, mode: "open"});
};
"""
# Material swaps each <pre class="mermaid"> for a <div> holding the drawing: every one
# swapped, and each holding its drawing.
DIAGRAMS_DRAWN = """() => {
  const divs = [...document.querySelectorAll('div.mermaid')];
  return document.querySelectorAll('pre.mermaid').length === 0 &&
    divs.every(d => d.shadowRoot && d.shadowRoot.querySelector('svg'));
}"""
RENDERED_DIAGRAMS = (
    "[...document.querySelectorAll('div.mermaid')]"
    ".filter(e => e.getBoundingClientRect().height > 50).length"
)
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
MEASURE_NOTEBOOK = """
() => {
  const article = document.querySelector('article.md-content__inner');
  const blocks = [...article.querySelectorAll(
    'pre, .jp-OutputArea-output, .jp-RenderedHTMLCommon table, .highlight-ipynb')];
  const scrolling = blocks
    .filter(e => e.scrollWidth > e.clientWidth + 1)
    .map(e => e.innerText.trim().split('\\n')[0].slice(0, 60));
  const outputs = [...article.querySelectorAll('.jp-OutputArea-output pre')];
  const breaking = outputs
    .filter(e => getComputedStyle(e).wordBreak === 'break-all')
    .map(e => e.innerText.slice(0, 40));
  const tags = [...article.querySelectorAll('.cell-tag, .celltoolbar')]
    .filter(e => e.getClientRects().length > 0)
    .map(e => e.innerText);
  const heading = e => e.innerText.replace(/¶$/, '').trim();
  const headings = [...article.querySelectorAll('h2, h3')].map(heading);
  const toc = [...document.querySelectorAll(
    '.md-sidebar--secondary nav.md-nav--secondary a.md-nav__link')].map(e => e.innerText.trim());
  const root = document.scrollingElement;
  return {
    scrolling, breaking, tags, headings, toc,
    pageScrolls: Math.max(root.scrollWidth, document.body.scrollWidth) > window.innerWidth,
  };
}
"""
MEASURE_TABLES = """
() => {
  const article = document.querySelector('article.md-content__inner');
  const cut = [...article.querySelectorAll('td code')]
    .filter(e => !/[\\s-]/.test(e.innerText) && e.getClientRects().length > 1)
    .map(e => e.innerText);
  const scrolling = [...article.querySelectorAll('.md-typeset__scrollwrap, table')]
    .filter(e => e.scrollWidth > e.clientWidth + 1)
    .map(e => e.innerText.trim().slice(0, 60));
  return {cut, scrolling};
}
"""
# The article's code blocks that scroll sideways, and those whose copy button covers a
# word of their text (spaces a wrapped line leaves hanging under it do not count).
MEASURE_CODE = """
() => {
  const blocks = [...document.querySelectorAll('article pre > code')];
  const first = e => e.innerText.trim().split('\\n')[0].slice(0, 60);
  const scrolling = blocks.filter(e => e.scrollWidth > e.clientWidth + 1).map(first);
  const covered = [];
  const range = document.createRange();
  for (const code of blocks) {
    const button = code.parentElement.querySelector('.md-code__button');
    const b = button && button.getBoundingClientRect();
    if (!b || !b.width) continue;
    const over = r => r.width > 0 && r.right > b.left && r.left < b.right &&
      r.bottom > b.top && r.top < b.bottom;
    const walker = document.createTreeWalker(code, NodeFilter.SHOW_TEXT);
    let hit = false;
    for (let node = walker.nextNode(); node && !hit; node = walker.nextNode()) {
      range.selectNodeContents(node);
      if (![...range.getClientRects()].some(over)) continue;
      for (const word of node.data.matchAll(/\\S+/g)) {
        range.setStart(node, word.index);
        range.setEnd(node, word.index + word[0].length);
        if ([...range.getClientRects()].some(over)) { hit = true; break; }
      }
    }
    if (hit) covered.push(first(code));
  }
  return {scrolling, covered};
}
"""
# Every tab of a tabbed block is shown, so that the pictures of hidden tabs are measured.
SHOW_TABS = ".tabbed-set > .tabbed-content > .tabbed-block { display: block !important; }"
MEASURE_PICTURES = """async () => {
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


@dataclass(frozen=True)
class Wanted:
    """A page to load at a width; ``screenshot``: saved to `SCREENSHOTS` once settled."""

    path: str
    width: int
    screenshot: bool = False


@dataclass
class Visit:
    """What one load of a page showed; ``raised`` if reading it failed (the tests re-raise)."""

    path: str
    width: int
    #: What went wrong from the first request on: console errors, failed requests,
    #: requests off the machine, error responses.
    seen: dict[str, list[str]] = field(default_factory=dict)
    heading: str | None = None
    #: Mermaid diagrams drawn (more than 50 px high), on a page that draws some.
    diagrams: int | None = None
    #: The state-machines page's diagrams, measured (`MEASURE_DIAGRAMS`).
    diagram_sizes: list[Any] | None = None
    #: A notebook page's `MEASURE_NOTEBOOK`, the errors page's `MEASURE_TABLES`.
    layout: dict[str, Any] | None = None
    #: Every picture of the article (`MEASURE_PICTURES`), at 1280 px.
    pictures: list[dict[str, Any]] | None = None
    #: A page's code blocks (`MEASURE_CODE`) by width, 1280 then 390 px, every tab shown;
    #: on every page but the notebook pages.
    code: dict[int, dict[str, list[str]]] | None = None
    raised: BaseException | None = None


def plan(site: Path) -> list[Wanted]:
    """Every load the checks need: every page at 1280 px (test_browser's pages, every
    page that may draw a picture, every page with code), the notebook pages at 390 px
    too."""
    checked = [path for path, _ in CHECKED_PAGES]
    every = article.pages(site)
    wide = [
        Wanted(path, WIDE["width"], screenshot=path in checked)
        for path in dict.fromkeys(checked + every)
    ]
    return wide + [Wanted(path, PHONE["width"]) for path in NOTEBOOK_PAGES]


def screenshot_name(path: str) -> str:
    """The file name (no suffix) of ``path``'s screenshot."""
    return re.sub(r"[^a-z0-9]+", "-", path.lower()).strip("-") or "home"


def _empty_index(site: Path) -> str:
    """The site's search index with its configuration and no documents."""
    index = json.loads((site / SEARCH_INDEX).read_text(encoding="utf-8"))
    return json.dumps({**index, "docs": []})


@dataclass
class _Open:
    """A page loading in a tab of its own."""

    visit: Visit
    page: Any
    diagrams: bool


def spare_mermaid(target: Any, site: Path, path: str) -> None:
    """Route mermaid to an empty script in ``target`` (a page or a browser context) when
    the page ``path`` draws no diagram: Material runs it only for a diagram, and the
    pages with one load the real one. Every request is still checked for its host."""
    from playwright.sync_api import Route

    if draws_diagrams(site, path):
        return

    def no_mermaid(route: Route) -> None:
        route.fulfill(status=200, content_type="text/javascript", body="")

    target.route(MERMAID, no_mermaid)


def _open(context: Any, site: Path, base: str, wanted: Wanted, index: str) -> _Open:
    """Start loading ``wanted`` in a new tab of its width's context, recording what goes
    wrong from the first request on; returns once the answer starts, so that several
    pages load side by side."""
    from playwright.sync_api import ConsoleMessage, Request, Response, Route

    visit = Visit(wanted.path, wanted.width)
    seen = visit.seen = {"console": [], "failed": [], "off_host": [], "status": []}
    diagrams = draws_diagrams(site, wanted.path)
    page = context.new_page()
    if wanted.path != "":
        # Home loads the real index (the search test reads it); the other pages' search
        # workers still start and load an index, of no pages.
        def small_index(route: Route) -> None:
            route.fulfill(status=200, content_type="application/json", body=index)

        page.route(f"**/{SEARCH_INDEX}", small_index)
    if diagrams:
        page.add_init_script(OPEN_SHADOW_ROOTS)
    spare_mermaid(page, site, wanted.path)

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
    try:
        page.goto(urljoin(base, wanted.path), wait_until="commit")
    except Exception as exc:  # reported by the page's own tests
        visit.raised = exc
    return _Open(visit, page, diagrams)


def _read(opened: _Open, wanted: Wanted) -> None:
    """Wait for the page to settle, then read what the checks need of it."""
    visit, page = opened.visit, opened.page
    page.wait_for_load_state("networkidle")
    heading = page.locator("article.md-content__inner h1").first
    visit.heading = heading.inner_text(timeout=10_000).rstrip("¶").strip()
    if opened.diagrams:
        page.wait_for_function(DIAGRAMS_DRAWN, timeout=20_000)
        visit.diagrams = page.evaluate(RENDERED_DIAGRAMS)
    if wanted.path == STATE_MACHINES:
        visit.diagram_sizes = page.evaluate(MEASURE_DIAGRAMS)
    if wanted.screenshot:
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SCREENSHOTS / f"{screenshot_name(wanted.path)}.png"))
    if wanted.path == STATE_MACHINES:
        for number, element in enumerate(page.locator("div.mermaid").all(), start=1):
            element.screenshot(path=str(SCREENSHOTS / f"state-diagram-{number}.png"))
    if wanted.path == FLOWS:
        for href in page.locator("a[download]").evaluate_all("els => els.map(e => e.href)"):
            status = page.request.get(href).status
            if status != 200:
                visit.seen["status"].append(f"{status} {href}")
    if wanted.path in NOTEBOOK_PAGES:
        visit.layout = page.evaluate(MEASURE_NOTEBOOK)
    elif wanted.path == ERRORS:
        visit.layout = page.evaluate(MEASURE_TABLES)
    if wanted.width == WIDE["width"]:
        # Last: showing every tab changes the page the other reads see.
        page.add_style_tag(content=SHOW_TABS)
        visit.pictures = page.evaluate(MEASURE_PICTURES)
        if wanted.path not in NOTEBOOK_PAGES:
            # The same tab narrowed to a phone's width: laid out again, not loaded again.
            visit.code = {WIDE["width"]: page.evaluate(MEASURE_CODE)}
            page.set_viewport_size(PHONE)
            visit.code[PHONE["width"]] = page.evaluate(MEASURE_CODE)


def visit_all(browser: Any, site: Path, base: str, wanted: list[Wanted]) -> list[Visit]:
    """Load and read every page of ``wanted`` in ``browser``, `AT_ONCE` at a time."""
    index = _empty_index(site)
    contexts = {
        size["width"]: browser.new_context(viewport=size)
        for size in (WIDE, PHONE)
        if any(one.width == size["width"] for one in wanted)
    }
    loading: deque[tuple[Wanted, _Open]] = deque()
    done: list[Visit] = []

    def finish() -> None:
        one, opened = loading.popleft()
        try:
            if opened.visit.raised is None:
                _read(opened, one)
        except Exception as exc:  # reported by the page's own tests
            opened.visit.raised = exc
        finally:
            opened.page.close()
        done.append(opened.visit)

    try:
        for one in wanted:
            if len(loading) == AT_ONCE:
                finish()
            loading.append((one, _open(contexts[one.width], site, base, one, index)))
        while loading:
            finish()
    finally:
        for context in contexts.values():
            context.close()
    return done
