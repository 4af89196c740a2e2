"""A copy of the shipped notebooks outside the clone tells the reader what works there.

The notebooks say ``make lab`` and link to guide pages by paths relative to the built
guide: right in a clone, wrong in the empty folder `workbench lab` (or ``workbench
notebooks copy``) fills from a wheel. The copy says ``workbench lab`` and links each
guide page where it is published; the code the cells run is the same.
"""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path
from typing import Any

from tests.paths import ROOT
from workbench.cli.run import guide_hint
from workbench.notebook.shipped import GUIDE_SOURCE, copy_notebooks, shipped_notebooks

LINK = re.compile(r"\]\(([^)\s]+)\)")


def _cells(path: Path) -> list[dict[str, Any]]:
    cells: list[dict[str, Any]] = json.loads(path.read_text(encoding="utf-8"))["cells"]
    return cells


def test_a_copy_says_workbench_lab_and_links_the_published_guide(tmp_path: Path) -> None:
    report = copy_notebooks(tmp_path)
    assert len(report.copied) == len(shipped_notebooks()) >= 9
    links = []
    for copy in report.copied:
        text = copy.read_text(encoding="utf-8")
        assert "make lab" not in text, copy.name
        assert "](../" not in text, copy.name
        links += [link for link in LINK.findall(text) if link.startswith(GUIDE_SOURCE)]
        original = next(p for p in shipped_notebooks() if p.name == copy.name)
        code = [c["source"] for c in _cells(original) if c["cell_type"] == "code"]
        assert [c["source"] for c in _cells(copy) if c["cell_type"] == "code"] == code
    assert len(links) >= 9, "the notebooks' links to the guide were not found"
    for link in links:
        page = link.removeprefix(GUIDE_SOURCE).split("#")[0]
        assert (ROOT / "docs" / page).is_file(), f"{link}: no such page in docs/"
    assert "workbench lab" in report.copied[0].read_text(encoding="utf-8")


def test_the_published_guide_is_the_projects_documentation_url() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    documentation = project["urls"]["Documentation"]
    assert documentation.replace("/tree/", "/blob/") + "/" == GUIDE_SOURCE


def test_the_run_points_at_the_guide_a_folder_has(tmp_path: Path) -> None:
    assert guide_hint(ROOT).startswith("`make docs-serve`")
    assert guide_hint(tmp_path) == GUIDE_SOURCE
