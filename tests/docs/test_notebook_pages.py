"""The flow notebooks' pages read in Chromium: nothing scrolls sideways, tags stay hidden.

Every notebook page is opened at 1280 px and at 390 px, all at once in one browser
(the pages load side by side, which keeps the suite's time), then measured: at 1280
px no code block, output or table scrolls sideways; at 390 px the page itself does
not; outputs wrap at word boundaries; the tags that serve the tests are not shown;
the table of contents says what the headings say. The errors page is measured with
them: its table keeps each identifier whole and fits the column.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any
from urllib.parse import urljoin

import pytest

from tests.chromium import chromium
from tests.paths import ROOT

pytestmark = pytest.mark.browser

NOTEBOOK_PAGES = [f"notebooks/{p.stem}/" for p in sorted((ROOT / "notebooks").glob("*.ipynb"))]
WIDE = {"width": 1280, "height": 900}
PHONE = {"width": 390, "height": 844}
#: Not fetched: neither lays out a notebook page (no diagram is drawn with mermaid there,
#: and the search index loads in a worker), and parsing 3.5 MB of mermaid in 18 pages at
#: once took two thirds of this test's time on 2 cores.
NOT_FETCHED = ("**/mermaid.min.js", "**/search/*")

MEASURE = """
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


@pytest.fixture(scope="module")
def measured(site_url: str) -> Iterator[dict[tuple[str, int], dict[str, Any]]]:
    """Every notebook page at both widths, loaded side by side, then measured."""
    with chromium("the notebook pages' layout checks") as browser:
        contexts = [browser.new_context(viewport=WIDE), browser.new_context(viewport=PHONE)]
        for context in contexts:
            for pattern in NOT_FETCHED:
                context.route(pattern, lambda route: route.abort())
        try:
            opened = []
            for context in contexts:
                for path in NOTEBOOK_PAGES:
                    page = context.new_page()
                    # "commit" returns once the answer starts: the pages then load together.
                    page.goto(urljoin(site_url, path), wait_until="commit")
                    opened.append((path, page))
            errors = contexts[0].new_page()
            errors.goto(urljoin(site_url, "errors/"), wait_until="commit")
            opened.append(("errors/", errors))
            results = {}
            for path, page in opened:
                page.wait_for_load_state("load")
                size = page.viewport_size
                assert size is not None
                script = MEASURE_TABLES if path == "errors/" else MEASURE
                results[(path, size["width"])] = page.evaluate(script)
            yield results
        finally:
            for context in contexts:
                context.close()


def test_every_notebook_page_was_measured(measured: dict[tuple[str, int], Any]) -> None:
    assert len(NOTEBOOK_PAGES) == 9
    assert len(measured) == 2 * len(NOTEBOOK_PAGES) + 1


def test_the_errors_tables_keep_names_whole_and_fit_at_1280(
    measured: dict[tuple[str, int], dict[str, Any]],
) -> None:
    errors = measured[("errors/", 1280)]
    assert errors["cut"] == [], "identifiers broken across lines"
    assert errors["scrolling"] == []


def test_no_code_block_or_output_scrolls_sideways_at_1280(
    measured: dict[tuple[str, int], dict[str, Any]],
) -> None:
    scrolling = {
        path: m["scrolling"]
        for (path, width), m in measured.items()
        if width == 1280 and path in NOTEBOOK_PAGES
    }
    assert {path: blocks for path, blocks in scrolling.items() if blocks} == {}


def test_no_page_scrolls_sideways_at_390(
    measured: dict[tuple[str, int], dict[str, Any]],
) -> None:
    scrolls = [path for (path, width), m in measured.items() if width == 390 and m["pageScrolls"]]
    assert scrolls == []


def test_outputs_wrap_at_word_boundaries(measured: dict[tuple[str, int], dict[str, Any]]) -> None:
    breaking = {path: m["breaking"] for (path, _), m in measured.items() if m.get("breaking")}
    assert breaking == {}


def test_the_tests_cell_tags_are_not_shown(measured: dict[tuple[str, int], dict[str, Any]]) -> None:
    shown = {path: m["tags"] for (path, _), m in measured.items() if m.get("tags")}
    assert shown == {}


def test_the_table_of_contents_says_what_the_headings_say(
    measured: dict[tuple[str, int], dict[str, Any]],
) -> None:
    for (path, width), m in measured.items():
        if width != 1280 or path not in NOTEBOOK_PAGES:
            continue
        assert m["toc"], f"{path}: no table of contents"
        assert m["toc"] == m["headings"], path
