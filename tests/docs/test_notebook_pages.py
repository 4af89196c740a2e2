"""The flow notebooks' pages read in Chromium: nothing scrolls sideways, tags stay hidden.

Every notebook page is opened at 1280 px and at 390 px (one load of each, shared with the
guide's other browser checks: `tests.docs.visits`), then measured: at 1280
px no code block, output or table scrolls sideways; at 390 px the page itself does
not; outputs wrap at word boundaries; the tags that serve the tests are not shown;
the table of contents says what the headings say. The errors page is measured with
them: its table keeps each identifier whole and fits the column.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.docs.visits import ERRORS, NOTEBOOK_PAGES, PHONE, WIDE, Visit

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def measured(visits: dict[tuple[str, int], Visit]) -> dict[tuple[str, int], dict[str, Any]]:
    """Every notebook page at both widths, and the errors page at 1280 px, as measured."""
    wanted = [(path, width) for width in (WIDE["width"], PHONE["width"]) for path in NOTEBOOK_PAGES]
    results = {}
    for key in [*wanted, (ERRORS, WIDE["width"])]:
        visit = visits[key]
        if visit.raised is not None:
            raise visit.raised
        assert visit.layout is not None, key
        results[key] = visit.layout
    return results


def test_every_notebook_page_was_measured(measured: dict[tuple[str, int], Any]) -> None:
    assert len(NOTEBOOK_PAGES) == 9
    assert len(measured) == 2 * len(NOTEBOOK_PAGES) + 1


def test_the_errors_tables_keep_names_whole_and_fit_at_1280(
    measured: dict[tuple[str, int], dict[str, Any]],
) -> None:
    errors = measured[(ERRORS, 1280)]
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
