"""The guide and the sandbox agree on X-Timestamp: every timestamp the signing pages show
is one `workbench.signing.parse_timestamp` (which the sandbox verifies with) accepts, a
fraction of a second among them, and no page says a fraction is refused."""

from __future__ import annotations

import re

from tests.paths import ROOT
from workbench.signing import parse_timestamp

PAGES = (
    ROOT / "docs" / "concepts" / "signing.md",
    ROOT / "docs" / "concepts" / "signing-without-python.md",
    ROOT / "docs" / "sandbox" / "decisions.md",
    *sorted((ROOT / "docs" / "recipes").glob("sign-request.*")),
)
SHOWN = re.compile(r"`(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?Z)`")


def test_every_timestamp_the_signing_pages_show_is_accepted() -> None:
    shown = [m for page in PAGES for m in SHOWN.findall(page.read_text("utf-8"))]
    assert any("." in text for text in shown), "no page shows a fraction of a second"
    for text in shown:
        parse_timestamp(text)


def test_no_signing_page_says_a_fraction_is_refused() -> None:
    refusals = re.compile(r"\b(no|not|without) (milliseconds|fractions?)\b|does not\s+take", re.I)
    for page in PAGES:
        text = page.read_text("utf-8")
        found = [m[0] for m in refusals.finditer(text)]
        assert found == [], f"{page.name}: {found}"
