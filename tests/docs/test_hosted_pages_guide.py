"""The guide's page of the hosted pages shows every page in both languages, from the tool.

``make docs-gen`` (`tools.hosted_shots`) writes ``docs/sandbox/hosted-pages/<page>-<lang>.png``;
the page must show each of them, and nothing else may sit in that folder unused.
"""

from __future__ import annotations

import re
import struct

from tests.paths import ROOT
from tools import hosted_shots

PAGE = ROOT / "docs" / "sandbox" / "hosted-pages.md"
SHOTS = ROOT / "docs" / "sandbox" / "hosted-pages"


def test_every_page_is_shown_in_both_languages_and_every_shot_is_used() -> None:
    text = PAGE.read_text(encoding="utf-8")
    shown = set(re.findall(r"\]\(hosted-pages/([a-z-]+\.png)\)", text))
    expected = {f"{page}-{lang}.png" for page in hosted_shots.PAGES
                for lang in hosted_shots.LANGUAGES}  # fmt: skip
    assert shown == expected
    assert {path.name for path in SHOTS.glob("*.png")} == expected


def test_the_shots_are_phone_width_pngs() -> None:
    for path in SHOTS.glob("*.png"):
        head = path.read_bytes()[:24]
        assert head[:8] == b"\x89PNG\r\n\x1a\n", path
        width, height = struct.unpack(">II", head[16:24])
        assert width == 390, (path.name, width)
        assert height >= 500, (path.name, height)
