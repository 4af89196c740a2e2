"""The client reference: each Returns table describes the one value a call returns."""

from __future__ import annotations

import re
from pathlib import Path

RETURNS = re.compile(
    r'doc-section-title">Returns:</span></p>\s*<table>.*?<tbody>(.*?)</tbody>', re.S
)


def test_every_returns_table_has_one_row(site: Path) -> None:
    tables = 0
    extra = []
    for page in sorted((site / "reference").rglob("index.html")):
        for body in RETURNS.findall(page.read_text(encoding="utf-8")):
            tables += 1
            if body.count("<tr") != 1:
                cells = re.sub(r"<[^>]+>|\s+", " ", body).strip()
                extra.append(f"{page.parent.name}: {cells[:120]}")
    assert tables > 20, "the reference pages' Returns tables were not found"
    assert extra == [], "a Returns description's second line became a second value"
