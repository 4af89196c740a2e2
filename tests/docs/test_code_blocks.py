"""Code is read without scrolling sideways: every page but the notebooks', at 1280 and 390 px.

A code block too wide for its column wraps its long lines (readable.css) instead of
scrolling, and its copy button covers no word of its text. Each page is loaded once
(`tests.docs.visits`): measured at 1280 px, then in the same tab narrowed to 390 px.
The notebook pages have checks of their own (test_notebook_pages).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.docs import article
from tests.docs.visits import NOTEBOOK_PAGES, PHONE, WIDE, Visit

pytestmark = pytest.mark.browser


def _measured(site: Path, visits: dict[tuple[str, int], Visit]) -> dict[str, Visit]:
    found = {}
    for path in article.pages(site):
        if path in NOTEBOOK_PAGES:
            continue
        visit = visits[(path, WIDE["width"])]
        if visit.raised is not None:
            raise visit.raised
        assert visit.code is not None, f"{path}: its code blocks were not measured"
        found[path] = visit
    return found


@pytest.mark.parametrize("width", [WIDE["width"], PHONE["width"]])
def test_no_code_block_scrolls_sideways(
    site: Path, visits: dict[tuple[str, int], Visit], width: int
) -> None:
    measured = _measured(site, visits)
    assert len(measured) >= 30, "the guide's pages were not found"
    scrolling = {
        path: visit.code[width]["scrolling"]
        for path, visit in measured.items()
        if visit.code and visit.code[width]["scrolling"]
    }
    assert scrolling == {}


@pytest.mark.parametrize("width", [WIDE["width"], PHONE["width"]])
def test_the_copy_button_covers_no_code(
    site: Path, visits: dict[tuple[str, int], Visit], width: int
) -> None:
    covered = {
        path: visit.code[width]["covered"]
        for path, visit in _measured(site, visits).items()
        if visit.code and visit.code[width]["covered"]
    }
    assert covered == {}
