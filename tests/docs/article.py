"""What a built page's ``<article>`` may draw, read from its HTML without a browser.

The guide's picture checks (test_images) measure, in the page's first ``<article>``, every
``<img>``, every ``<svg>`` (a Mermaid diagram's too) and every element with
``role="img"``. A page whose article holds none of these, nor a script that could add
one, has nothing to measure: the HTML says so, and no browser need load it for that.
Only elements count: a stylesheet or script that mentions "mermaid" or "<img" as text
(the notebook pages inline JupyterLab's CSS) is not a picture.
"""

from __future__ import annotations

from html.parser import HTMLParser
from pathlib import Path

#: Elements drawn as pictures, measured by the picture checks.
PICTURE_TAGS = ("img", "svg")


class _ArticleReader(HTMLParser):
    """Collects what in the document's first ``<article>`` may draw a picture."""

    def __init__(self) -> None:
        super().__init__()
        self.depth = 0
        self.seen_article = False
        self.closed = False
        self.found: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if self.closed:
            return
        if tag == "article":
            self.depth += 1
            self.seen_article = True
        if not self.depth:
            return
        attributes = dict(attrs)
        classes = (attributes.get("class") or "").split()
        if tag in PICTURE_TAGS:
            self.found.append(f"<{tag}>")
        elif "mermaid" in classes:
            self.found.append(f"<{tag} class=mermaid>")
        elif tag == "script":
            self.found.append("<script> (may add a picture)")
        if attributes.get("role") == "img" and tag not in PICTURE_TAGS:
            self.found.append(f'<{tag} role="img">')

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)
        if tag == "article":  # <article/>: opened and closed at once
            self.handle_endtag(tag)

    def handle_endtag(self, tag: str) -> None:
        if tag == "article" and self.depth and not self.closed:
            self.depth -= 1
            self.closed = self.depth == 0


def may_draw(html: str) -> list[str]:
    """What in ``html``'s first ``<article>`` is, or may add, a picture (empty: nothing).

    Raises:
        ValueError: the page has no ``<article>`` (the picture checks measure in it).
    """
    reader = _ArticleReader()
    reader.feed(html)
    reader.close()
    if not reader.seen_article:
        raise ValueError("no <article> in the page")
    return reader.found


def pages(site: Path) -> list[str]:
    """Every page of the built ``site``: ``""`` for Home, else ``"section/page/"``."""
    found = []
    for index in sorted(site.rglob("index.html")):
        path = index.parent.relative_to(site).as_posix()
        if path.startswith(("assets", "search")) or path == "404":
            continue
        found.append("" if path == "." else f"{path}/")
    return found


def page_may_draw(site: Path, path: str) -> list[str]:
    """`may_draw` of the built page ``path`` of ``site``."""
    return may_draw((site / path / "index.html").read_text("utf-8"))
