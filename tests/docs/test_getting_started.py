"""Getting started says what there is: every setting the README lists, and what the first
request prints, shown under it as it prints it."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from tests.paths import ROOT
from workbench.testing import running_sandbox

PAGE = ROOT / "docs" / "getting-started.md"
FENCE = re.compile(r"^```(\w*)[^\n]*\n(.*?)^```", re.MULTILINE | re.DOTALL)
SETTING = re.compile(r"^\| `(WORKBENCH_[A-Z_]+)` \|", re.MULTILINE)
NUMBERS = {"three": 3, "four": 4, "five": 5, "six": 6, "seven": 7}


def _section(text: str, heading: str) -> str:
    start = text.index(heading)
    end = text.find("\n## ", start + len(heading))
    return text[start : end if end != -1 else None]


def test_the_settings_are_the_readmes_and_counted_right() -> None:
    section = _section(PAGE.read_text(encoding="utf-8"), "## Configuration")
    listed = SETTING.findall(section)
    readme = SETTING.findall(_section((ROOT / "README.md").read_text("utf-8"), "## Configuration"))
    assert listed == readme
    said = re.search(r"read (\w+) settings", section)
    assert said is not None, "the section no longer says how many settings there are"
    assert NUMBERS[said[1]] == len(listed)


def test_the_first_request_shows_what_it_prints(tmp_path: Path) -> None:
    section = _section(PAGE.read_text(encoding="utf-8"), "## The first request")
    blocks = [(m[1], m[2]) for m in FENCE.finditer(section)]
    (language, code), (shown_as, shown) = blocks[0], blocks[1]
    assert (language, shown_as) == ("python", "text")
    env = {k: v for k, v in os.environ.items() if not k.startswith("WORKBENCH_")}
    with running_sandbox(db_dir=tmp_path) as server:
        env["WORKBENCH_BASE_URL"] = server.base_url
        done = subprocess.run(
            [sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True,
            text=True, timeout=60,
        )  # fmt: skip
    assert done.returncode == 0, done.stderr
    ids = re.compile(r"\bpay_[0-9a-f]{24}\b")
    assert ids.search(shown), "the output shown has no payment id"
    assert ids.sub("pay_ID", done.stdout) == ids.sub("pay_ID", shown)
