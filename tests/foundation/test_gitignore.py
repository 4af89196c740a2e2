"""What documented commands write into the checkout is ignored by git."""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest

from tests.paths import ROOT
from workbench.cli.parity import parity

#: ``workbench postman -o FILE`` and ``workbench openapi > FILE`` as the pages show them.
_WRITES = re.compile(r"workbench (?:postman -o|openapi >) (\S+)")


def _files_written_by_documented_commands() -> list[str]:
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    found = {m[1] for page in pages for m in _WRITES.finditer(page.read_text("utf-8"))}
    return sorted(found)


def _default_report_dir() -> str:
    (option,) = [p for p in parity.params if p.name == "report_dir"]
    return str(option.default)


@pytest.mark.parametrize(
    "path",
    [
        "reports/notebooks.xml",  # docs/reference/cli.md: workbench run --junit reports/...
        f"{_default_report_dir()}/parity.md",  # workbench parity's own default
        *_files_written_by_documented_commands(),
    ],
)
def test_reports_made_by_documented_commands_are_ignored(path: str) -> None:
    git = shutil.which("git")
    if git is None:
        pytest.skip("git is not installed")
    result = subprocess.run(
        [git, "check-ignore", "--no-index", "--quiet", path],
        cwd=ROOT,
        check=False,
        capture_output=True,
    )
    assert result.returncode == 0, f"{path} would show up in `git status`"


def test_the_guide_shows_where_the_postman_and_openapi_commands_write() -> None:
    assert "payments-workbench.postman_collection.json" in _files_written_by_documented_commands()
    assert "openapi.json" in _files_written_by_documented_commands()
