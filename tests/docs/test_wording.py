"""The guide speaks about the product, never about the project's own planning."""

from __future__ import annotations

import html
import re
from pathlib import Path

from tests.paths import ROOT

# "the next issue", "issue 16", "a later phase", "phase 2", "this round", "round-1"...
PLANNING = re.compile(
    r"\b(?:issues?|phases?|milestones?|(?:this|next|previous|last) round|round[- ]\d+)\b",
    re.IGNORECASE,
)
HIDDEN = re.compile(r"<(script|style)\b.*?</\1>", re.DOTALL | re.IGNORECASE)


def _hits(name: str, text: str) -> list[str]:
    return [
        f"{name}: …{' '.join(text[max(0, m.start() - 50) : m.end() + 30].split())}…"
        for m in PLANNING.finditer(text)
    ]


def test_no_source_page_refers_to_issues_or_phases() -> None:
    sources = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    hits = [h for p in sources for h in _hits(str(p.relative_to(ROOT)), p.read_text("utf-8"))]
    assert hits == []


def test_no_built_page_refers_to_issues_or_phases(site: Path) -> None:
    hits = []
    for page in sorted(site.rglob("*.html")):
        text = HIDDEN.sub(" ", page.read_text("utf-8"))
        text = html.unescape(re.sub(r"<[^>]+>", " ", text))
        hits.extend(_hits(str(page.relative_to(site)), text))
    assert hits == []
