"""MkDocs hook: ``llms.txt`` and ``llms-full.txt`` at the built guide's root, for coding assistants.

The format of llmstxt.org: ``llms.txt`` is the guide's title, its description and one
line per page, in the order of ``nav`` and under its top-level sections, each a link to
the page's Markdown and the page's first sentence; ``llms-full.txt`` is every page's text
in that order, code blocks included. Both are made from the pages as the build rendered
them (snippets included, the API reference expanded, the notebooks with their outputs),
turned back into Markdown with markdownify; each page's Markdown is also written beside
its ``index.html`` as ``index.md``, where ``llms.txt`` links. Links are relative to the
guide's root, so the files read the same wherever the guide is served.

What is not text to read is left out: the copy buttons' labels, the notebooks' flat
copies of each cell's source (kept for the clipboard), the headings' permalink marks.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bs4 import BeautifulSoup
from markdownify import ATX, MarkdownConverter
from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.nav import Navigation, Section
from mkdocs.structure.pages import Page

__all__ = ["on_nav", "on_page_content", "on_post_build"]

#: CSS selectors of what is not text to read.
NOT_TEXT = (
    "div.zeroclipboard-container",
    "div.clipboard-copy-txt",
    "a.headerlink",
    "a.anchor-link",
    "nav.md-tags",
)
#: The section of the pages at the top of ``nav``.
TOP = "Guide"
#: Where a page's summary in ``llms.txt`` is cut, at a word, when its sentence is longer.
SUMMARY_MAX = 200
_SENTENCE = re.compile(r"(.+?\.)(\s|$)")
_MARKUP = re.compile(r"\*+|`|\[([^\]]*)\]\([^)]*\)")


@dataclass
class _Page:
    title: str
    section: str
    link: str
    markdown: str = ""


_ORDER: list[_Page] = []
_BY_URI: dict[str, _Page] = {}


class _Converter(MarkdownConverter):
    """Code blocks keep their language: the highlighter's class, or a notebook cell's."""

    def convert_pre(self, el: Any, text: str, parent_tags: set[str]) -> str:
        classes = [*(el.get("class") or ()), *((el.parent.get("class") or ()) if el.parent else ())]
        language = next((c[9:] for c in classes if c.startswith("language-")), "")
        if not language and el.find_parent(class_="jp-InputArea") is not None:
            language = "python"  # a notebook's code cell; its outputs stay plain
        code = el.get_text()
        return f"\n\n```{language}\n{code.rstrip()}\n```\n\n"


_CONVERT = _Converter(bullets="-", heading_style=ATX, escape_underscores=False)


def _section(page: Page) -> str:
    top: Any = page.parent
    while top is not None and top.parent is not None:
        top = top.parent
    return str(top.title) if isinstance(top, Section) else TOP


def on_nav(nav: Navigation, config: MkDocsConfig, **kwargs: Any) -> Navigation:
    """Note the pages in ``nav``'s order, with their sections and links."""
    _ORDER.clear()
    _BY_URI.clear()
    for page in nav.pages:
        link = posixpath.join(page.file.dest_uri.rpartition("/")[0], "index.md").lstrip("/")
        entry = _Page(str(page.title or page.file.src_uri), _section(page), link)
        _ORDER.append(entry)
        _BY_URI[page.file.src_uri] = entry
    return nav


def _text(html: str) -> str:
    soup = BeautifulSoup(html, "html.parser")
    for selector in NOT_TEXT:
        for element in soup.select(selector):
            element.decompose()
    text = _CONVERT.convert_soup(soup)
    return re.sub(r"\n{3,}", "\n\n", text).strip() + "\n"


def on_page_content(html: str, page: Page, **kwargs: Any) -> str:
    """Keep the page's text as Markdown (the HTML goes on unchanged)."""
    entry = _BY_URI.get(page.file.src_uri)
    if entry is not None:
        entry.title = str(page.title or entry.title)
        entry.markdown = _text(html)
    return html


def _first_sentence(markdown: str) -> str:
    """The first sentence of the page's first paragraph, without its markup."""
    for block in markdown.split("\n\n"):
        line = " ".join(block.split())
        if not line or line[0] in "#|-!<>:" or line.startswith("```"):
            continue
        plain = _MARKUP.sub(lambda m: m.group(1) or "", line)
        found = _SENTENCE.match(plain)
        sentence = found.group(1) if found else plain
        if len(sentence) > SUMMARY_MAX:
            sentence = sentence[:SUMMARY_MAX].rsplit(" ", 1)[0].rstrip(",;:") + "…"
        return sentence
    return ""


def on_post_build(config: MkDocsConfig, **kwargs: Any) -> None:
    """Write each page's ``index.md``, then ``llms.txt`` and ``llms-full.txt``."""
    site = Path(config.site_dir)
    head = f"# {config.site_name}\n\n"
    if config.site_description:
        head += f"> {' '.join(config.site_description.split())}\n\n"
    sections: dict[str, list[str]] = {}  # in the order each first comes in ``nav``
    full = [head]
    for entry in _ORDER:
        if not entry.markdown:
            continue
        (site / entry.link).write_text(entry.markdown, encoding="utf-8")
        summary = _first_sentence(entry.markdown)
        line = f"- [{entry.title}]({entry.link})" + (f": {summary}" if summary else "")
        sections.setdefault(entry.section, []).append(line)
        full.append(f"\n---\n\n<!-- {entry.link} -->\n\n{entry.markdown}")
    index = [head] + [
        f"## {name}\n\n" + "\n".join(lines) + "\n\n" for name, lines in sections.items()
    ]
    (site / "llms.txt").write_text("".join(index), encoding="utf-8")
    (site / "llms-full.txt").write_text("".join(full), encoding="utf-8")
