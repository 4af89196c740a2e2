"""nbval really compares: a notebook copy with a changed output or a failing assertion fails."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

from tests.paths import ROOT
from workbench.config import (
    DEFAULT_API_KEY,
    DEFAULT_SECRET_KEY,
    ENV_API_KEY,
    ENV_BASE_URL,
    ENV_SECRET_KEY,
)

SOURCE = ROOT / "notebooks" / "04-preauthorization.ipynb"


def _cells(notebook: dict[str, Any]) -> list[dict[str, Any]]:
    cells: list[dict[str, Any]] = notebook["cells"]
    return cells


def _find(notebook: dict[str, Any], needle: str) -> tuple[int, int]:
    """The cell's index, and its number as nbval counts (code cells only, from 0)."""
    code = -1
    for index, cell in enumerate(_cells(notebook)):
        if cell["cell_type"] != "code":
            continue
        code += 1
        if needle in "".join(cell["source"]):
            return index, code
    raise AssertionError(f"no cell with {needle!r}")


def _failures(report: Path) -> dict[str, list[str]]:
    """Failed test names per notebook file, from a JUnit XML report."""
    failed: dict[str, list[str]] = {}
    for case in ET.parse(report).getroot().iter("testcase"):  # noqa: S314 - our own report
        if case.find("failure") is not None or case.find("error") is not None:
            failed.setdefault(Path(case.get("file") or case.get("classname", "")).stem, []).append(
                case.get("name", "")
            )
    return failed


def test_pytest_nbval_fails_on_a_changed_output_and_a_failing_assertion(
    tmp_path: Path, sandbox_url: str
) -> None:
    original = json.loads(SOURCE.read_text(encoding="utf-8"))
    # Up to the cell both changes go to: the rest would only be run again (the suite runs
    # the whole notebook), each copy in a kernel of its own.
    last = max(
        _find(original, "captured = client.payments.capture(")[0],
        _find(original, "assert captured.amount == 45_000")[0],
    )
    original["cells"] = _cells(original)[: last + 1]

    intact = tmp_path / "intact.ipynb"
    intact.write_text(json.dumps(original), encoding="utf-8")

    changed = json.loads(json.dumps(original))
    summary, summary_number = _find(changed, "captured = client.payments.capture(")
    stream = next(o for o in _cells(changed)[summary]["outputs"] if o["output_type"] == "stream")
    stream["text"] = [line.replace("450,00 TL", "540,00 TL") for line in stream["text"]]
    changed_path = tmp_path / "changed_output.ipynb"
    changed_path.write_text(json.dumps(changed), encoding="utf-8")

    failing = json.loads(json.dumps(original))
    check, check_number = _find(failing, "assert captured.amount == 45_000")
    cell = _cells(failing)[check]
    cell["source"] = "".join(cell["source"]).replace("== 45_000", "== 45_001")
    failing_path = tmp_path / "failing_assertion.ipynb"
    failing_path.write_text(json.dumps(failing), encoding="utf-8")

    report = tmp_path / "report.xml"
    env = {
        **os.environ,
        ENV_BASE_URL: sandbox_url,
        ENV_API_KEY: DEFAULT_API_KEY,
        ENV_SECRET_KEY: DEFAULT_SECRET_KEY,
    }
    completed = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
         "-c", str(ROOT / "pyproject.toml"), "-o", "junit_family=xunit1", f"--junitxml={report}",
         str(intact), str(changed_path), str(failing_path)],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    output = completed.stdout + completed.stderr
    assert completed.returncode == 1, output
    failed = _failures(report)
    assert "intact" not in failed, output
    assert failed.get("changed_output") == [f"Cell {summary_number}"], output
    assert failed.get("failing_assertion") == [f"Cell {check_number}"], output
    assert "540,00 TL" in output
    assert "AssertionError" in output
