"""What documented commands write into the checkout is ignored by git."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from tests.paths import ROOT
from workbench.cli.parity import parity


def _default_report_dir() -> str:
    (option,) = [p for p in parity.params if p.name == "report_dir"]
    return str(option.default)


@pytest.mark.parametrize(
    "path",
    [
        "reports/notebooks.xml",  # docs/reference/cli.md: workbench run --junit reports/...
        f"{_default_report_dir()}/parity.md",  # workbench parity's own default
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
