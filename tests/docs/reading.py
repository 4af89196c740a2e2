"""Every page of the built guide read once in Chromium, for every check that reads them.

The browser checks (``test_browser.py``: no error, no request off the machine, the
heading, a screenshot) and the picture checks (``test_images.py``: each picture's text
size and text alternative) read the same pages at the same width: each page is loaded
once (`AT_ONCE` side by side, each in a context of its own), settled, photographed, then
measured, and Chromium is closed before the results are handed out (the sync API holds
this thread's event loop while it runs).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urljoin, urlsplit

from tests.chromium import chromium
from tests.docs.site import MERMAID, draws_diagrams
from tests.paths import ROOT

SCREENSHOTS = ROOT / "artifacts" / "screenshots" / "docs"
LOCAL_SCHEMES = {"data", "blob", "about"}
VIEWPORT = {"width": 1280, "height": 900}
RENDERED_DIAGRAMS = (
    "[...document.querySelectorAll('div.mermaid')]"
    ".filter(e => e.getBoundingClientRect().height > 50).length"
)
#: Pages loading at once (each in a tab and context of its own).
AT_ONCE = 6

#: The pages whose heading the browser checks read, and photograph: (path, main heading).
PAGES: list[tuple[str, str | None]] = [
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
#: The flow notebooks' pages (their heading is the notebook's own).
NOTEBOOK_PAGES: list[tuple[str, str | None]] = [
    (f"notebooks/{p.stem}/", None) for p in sorted((ROOT / "notebooks").glob("*.ipynb"))
]

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


@dataclass
class Read:
    """One page read in a browser context of its own: what went wrong there (``seen``,
    from the first request on), and its pictures as measured."""

    url: str
    context: Any
    page: Any
    seen: dict[str, list[str]] = field(default_factory=dict)
    raised: BaseException | None = None
    pictures: list[dict[str, Any]] | None = None
    measuring_raised: BaseException | None = None

    def measured(self) -> list[dict[str, Any]]:
        """The page's pictures; raises what stopped the page loading or being measured."""
        if self.pictures is None:
            raise self.measuring_raised or self.raised or AssertionError(f"{self.url}: unread")
        return self.pictures


def site_pages(site: Path) -> list[str]:
    """Every page of the built site (``""`` for Home, else ``"section/page/"``)."""
    pages = []
    for index in sorted(site.rglob("index.html")):
        path = index.parent.relative_to(site).as_posix()
        if path.startswith(("assets", "search")) or path == "404":
            continue
        pages.append("" if path == "." else f"{path}/")
    return pages


def screenshot_name(path: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", path.lower()).strip("-") or "home"


def _open(browser: object, url: str, draws_diagrams: bool) -> Read:
    """Start loading ``url`` in a new context, recording what goes wrong from the first
    request on; returns once the answer starts, so that several pages load side by side."""
    from playwright.sync_api import Browser, ConsoleMessage, Request, Response, Route

    assert isinstance(browser, Browser)
    seen: dict[str, list[str]] = {"console": [], "failed": [], "off_host": [], "status": []}
    context = browser.new_context(viewport=VIEWPORT)  # type: ignore[arg-type]
    context.add_init_script(OPEN_SHADOW_ROOTS)
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
    read = Read(url, context, page, seen)
    try:
        page.goto(url, wait_until="commit")
    except Exception as exc:  # reported by the page's own test
        read.raised = exc
    return read


def _settle(read: Read, screenshot: Path | None) -> None:
    """Wait for the page to settle, then read its heading, diagrams, screenshot, downloads."""
    page, seen, url = read.page, read.seen, read.url
    page.wait_for_load_state("networkidle")
    heading = page.locator("article.md-content__inner h1").first
    seen["heading"] = [heading.inner_text(timeout=10_000).rstrip("¶").strip()]
    if "state-machines" in url:
        # Material swaps each <pre class="mermaid"> for a <div> holding the drawing in a
        # shadow root: count the swapped, non-empty ones.
        page.wait_for_function(RENDERED_DIAGRAMS + " >= 5", timeout=20_000)
        seen["diagrams"] = [str(page.evaluate(RENDERED_DIAGRAMS))]
    if screenshot is not None:
        screenshot.parent.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(screenshot))
    if url.rstrip("/").endswith("flows"):
        for href in page.locator("a[download]").evaluate_all("els => els.map(e => e.href)"):
            status = page.request.get(href).status
            if status != 200:
                seen["status"].append(f"{status} {href}")


def _measure(read: Read) -> None:
    """The page's pictures, every tab shown, once its diagrams are drawn."""
    page = read.page
    if page.locator(".mermaid").count():
        page.wait_for_function(DIAGRAMS_DRAWN, timeout=20_000)
    page.add_style_tag(content=SHOW_TABS)
    read.pictures = page.evaluate(MEASURE_PICTURES)


def read_guide(site: Path, site_url: str) -> dict[str, Read]:
    """Every page of `PAGES`, `NOTEBOOK_PAGES` (each photographed too) and of ``site``,
    read and measured; Chromium is closed again when this returns."""
    photographed = [path for path, _ in PAGES + NOTEBOOK_PAGES]
    paths = [*photographed, *(p for p in site_pages(site) if p not in photographed)]
    done: dict[str, Read] = {}
    with chromium("the browser checks of the guide") as browser:
        for start in range(0, len(paths), AT_ONCE):
            batch = paths[start : start + AT_ONCE]
            opened = [
                (path, _open(browser, urljoin(site_url, path), draws_diagrams(site, path)))
                for path in batch
            ]
            for path, read in opened:
                shot = SCREENSHOTS / f"{screenshot_name(path)}.png"
                loaded = read.raised is None
                try:
                    if loaded:
                        _settle(read, shot if path in photographed else None)
                except Exception as exc:  # reported by the page's own test
                    read.raised = exc
                try:
                    if loaded:
                        _measure(read)
                except Exception as exc:  # reported by the picture checks
                    read.measuring_raised = exc
                finally:
                    read.context.close()
                done[path] = read
    return done
