"""The dashboard's guide page shows every screenshot the tool takes, and only those.

``make docs-gen`` (`tools.dashboard_shots`) writes ``docs/sandbox/dashboard/<page>.png``.
"""

from __future__ import annotations

import re
import struct

from tests.paths import ROOT
from tools import dashboard_shots

PAGE = ROOT / "docs" / "sandbox" / "dashboard.md"
SHOTS = ROOT / "docs" / "sandbox" / "dashboard"


def test_every_shot_is_shown_and_every_shown_one_is_the_tools() -> None:
    shown = set(re.findall(r"\]\(dashboard/([a-z-]+\.png)\)", PAGE.read_text(encoding="utf-8")))
    expected = {f"{page}.png" for page in dashboard_shots.PAGES}
    assert shown == expected
    assert {path.name for path in SHOTS.glob("*.png")} == expected


def test_the_shots_are_phone_width_pngs() -> None:
    for path in SHOTS.glob("*.png"):
        head = path.read_bytes()[:24]
        assert head[:8] == b"\x89PNG\r\n\x1a\n", path
        width, height = struct.unpack(">II", head[16:24])
        assert width == 390, (path.name, width)
        assert height >= 500, (path.name, height)
