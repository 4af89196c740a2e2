"""The reference pages show their examples as code: no quote bars, no doctest markup.

A docstring's ``>>>`` lines outside a code block are Markdown quotes (three bars deep),
and ``# doctest: +SKIP`` is noise to a reader; the examples are fenced code instead.
"""

from __future__ import annotations

import re
from pathlib import Path

EXAMPLE = re.compile(r'<details class="example"[^>]*>(.*?)</details>', re.S)
# A highlighted block's div (its language class comes first, pygments_lang_class).
HIGHLIGHT = re.compile(r'<div class="(?:language-\S+ )?highlight">')


def test_every_example_box_on_the_reference_pages_is_clean_code(site: Path) -> None:
    pages = sorted((site / "reference").rglob("index.html"))
    examples = 0
    raw = []
    for page in pages:
        text = page.read_text(encoding="utf-8")
        name = page.parent.relative_to(site).as_posix()
        if "<blockquote" in text:
            raw.append(f"{name}: a quote bar (a >>> line outside a code block)")
        if "doctest:" in text:
            raw.append(f"{name}: doctest markup")
        for box in EXAMPLE.findall(text):
            examples += 1
            if not HIGHLIGHT.search(box):
                raw.append(f"{name}: an Example box without a code block")
    assert examples >= 5, "the reference pages' Example boxes were not found"
    assert raw == []
