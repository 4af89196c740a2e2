"""``workbench lab``: JupyterLab's help and version answer without a sandbox or a copy."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli_imports import workbench_imports
from workbench.cli.lab import _only_informs


@pytest.mark.parametrize(
    ("lab_args", "informs"),
    [
        (("--version",), True),
        (("-V",), True),
        (("-h",), True),
        (("--no-browser", "--help-all"), True),
        (("--no-browser",), False),
        (("--ServerApp.port=8888",), False),
        (("--", "--version"), False),  # after ``--``, not an option of JupyterLab's
        ((), False),
    ],
)
def test_what_jupyterlab_only_answers(lab_args: tuple[str, ...], informs: bool) -> None:
    assert _only_informs(lab_args) is informs


def test_lab_version_starts_no_sandbox_and_copies_nothing(tmp_path: Path) -> None:
    from jupyterlab import __version__

    notebooks, db = tmp_path / "notebooks", tmp_path / "sandbox.db"
    args = ["lab", "--notebooks", str(notebooks), "--db", f"sqlite:///{db}", "--version"]
    done, imported = workbench_imports(args, ["workbench.sandbox"], cwd=tmp_path, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.split() == [__version__]  # JupyterLab's answer, and nothing else
    assert imported == [], done.stderr
    assert not db.exists()
    assert not notebooks.exists()
