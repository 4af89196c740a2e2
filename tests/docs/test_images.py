"""Every picture of the built guide can be read: text at least 11 px as drawn, and a text
alternative saying what it shows.

Chromium opens, at desktop width, every page whose built HTML has a picture in its
``<article>`` (or a script that could add one), and the pages the other browser checks
read anyway (`tests.docs.visits`); it measures, as the page draws them:

- an ``<img>``: its ``alt`` (not empty, not nbconvert's "No description has been
  provided"); the smallest text of an SVG source (its ``font-size``s, decoded from the
  file or the ``data:`` address) times the scale the page draws it at; for a screenshot
  of ``docs/images/screenshots/``, the smallest text ``tools.screenshots`` recorded in
  its manifest, times that scale;
- an inline ``<svg>`` with text (a notebook's state path, a Mermaid diagram in its
  shadow root): each text's font size times the drawing's scale on screen;
- an element with ``role="img"``: its ``aria-label``.

Every other page is proven without a browser: its HTML has no such element in its
``<article>`` (`tests.docs.article`), and it counts as a page with no picture.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.docs import article
from tests.docs.visits import WIDE, Visit
from tests.paths import ROOT

pytestmark = pytest.mark.browser

#: The smallest text a picture may draw, in CSS px.
MIN_TEXT_PX = 11.0
NO_DESCRIPTION = "No description has been provided"
MANIFEST = ROOT / "docs" / "images" / "screenshots" / "manifest.json"
#: Every recorded picture: Home's (tools.screenshots), the two languages' (tools.hosted_shots)
#: and the dashboard's (tools.dashboard_shots).
MANIFESTS = (
    MANIFEST,
    ROOT / "docs" / "sandbox" / "hosted-pages" / "manifest.json",
    ROOT / "docs" / "sandbox" / "dashboard" / "manifest.json",
)


def _recorded() -> dict[str, Any]:
    """Each screenshot's size and smallest text, by file name, from every manifest."""
    found: dict[str, Any] = {}
    for manifest in MANIFESTS:
        found.update(json.loads(manifest.read_text(encoding="utf-8")))
    return found


@pytest.fixture(scope="module")
def measured(site: Path, visits: dict[tuple[str, int], Visit]) -> dict[str, list[dict[str, Any]]]:
    """Every page's pictures: as Chromium measured them, or none where the HTML has none."""
    results: dict[str, list[dict[str, Any]]] = {}
    for path in article.pages(site):
        visit = visits.get((path, WIDE["width"]))
        if visit is None:
            assert article.page_may_draw(site, path) == [], f"{path} was not measured"
            results[path] = []
            continue
        if visit.raised is not None:
            raise visit.raised
        assert visit.pictures is not None, path
        results[path] = visit.pictures
    pictures = [p for items in results.values() for p in items]
    counts = {kind: sum(1 for p in pictures if p["kind"] == kind) for kind in
              ("img", "svg", "mermaid", "role-img")}  # fmt: skip
    manifest = _recorded()
    for picture in pictures:
        shot = manifest.get(picture.get("file", ""))
        if shot is not None and picture["natural"]:
            picture["smallest"] = shot["smallestText"] * picture["shown"] / picture["natural"]
    sizes = sorted(round(p["smallest"], 1) for p in pictures if p.get("smallest") is not None)
    loaded = sum(1 for path in results if (path, WIDE["width"]) in visits)
    print(
        f"pictures measured on {len(results)} pages ({loaded} in Chromium, the others"
        f" without a picture in their HTML): {counts}; text sizes drawn (px): {sizes}"
    )
    return results


def test_the_pages_left_out_of_chromium_have_no_picture_in_their_html(
    site: Path, visits: dict[tuple[str, int], Visit]
) -> None:
    """A page the picture checks did not load has nothing they measure in its <article>."""
    left_out = [path for path in article.pages(site) if (path, WIDE["width"]) not in visits]
    drawn = {path: article.page_may_draw(site, path) for path in left_out}
    assert {path: found for path, found in drawn.items() if found} == {}


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
