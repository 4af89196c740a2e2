"""``workbench run --junit PATH --json PATH``: the results for CI, failed runs included."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from datetime import UTC, datetime
from pathlib import Path

import nbformat
from click.testing import CliRunner
from nbformat.v4 import new_code_cell, new_notebook

from workbench.cli import main
from workbench.cli._run_reports import exit_status, json_summary, junit_xml
from workbench.notebook.runner import FlowResult


def _write(path: Path, *sources: str) -> None:
    book = new_notebook(cells=[new_code_cell(source) for source in sources])
    book.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3"}
    nbformat.write(book, path)


def _parse(data: bytes) -> ET.Element:
    return ET.fromstring(data)  # noqa: S314 - the document this test run just wrote


def test_a_failed_run_writes_junit_and_json_then_exits_1(tmp_path: Path) -> None:
    _write(tmp_path / "01-ok.ipynb", "print(6 * 7)")
    _write(tmp_path / "02-broken.ipynb", 'raise ValueError("broken on purpose")')
    junit = tmp_path / "reports" / "notebooks.xml"
    summary_path = tmp_path / "reports" / "notebooks.json"
    result = CliRunner().invoke(
        main,
        ["run", "--notebooks", str(tmp_path), "--junit", str(junit), "--json", str(summary_path)],
    )
    assert result.exit_code == 1, result.output
    assert f"JUnit XML: {junit.resolve()}" in result.output

    suites = _parse(junit.read_bytes())
    assert suites.tag == "testsuites"
    [suite] = suites
    assert (suite.get("tests"), suite.get("failures"), suite.get("skipped")) == ("2", "1", "0")
    assert suite.get("timestamp", "").endswith("Z")
    cases = {case.get("name"): case for case in suite.iter("testcase")}
    assert set(cases) == {"01-ok", "02-broken"}
    assert list(cases["01-ok"]) == []
    [failure] = list(cases["02-broken"])
    assert failure.tag == "failure"
    # IPython colours the error line; the report holds it plain (XML allows no ESC)
    assert failure.get("message") == "ValueError: broken on purpose"
    assert float(cases["02-broken"].get("time", "-1")) > 0

    summary = json.loads(summary_path.read_text(encoding="utf-8"))
    assert (summary["passed"], summary["failed"], summary["skipped"]) == (1, 1, 0)
    assert summary["exitStatus"] == 1
    assert summary["sandbox"] == "embedded"
    assert summary["baseUrl"].startswith("http://127.0.0.1:")
    flows = {flow["name"]: flow for flow in summary["flows"]}
    assert flows["01-ok"]["result"] == "passed"
    assert flows["01-ok"]["error"] is None
    assert flows["02-broken"]["result"] == "failed"
    assert flows["02-broken"]["error"] == "ValueError: broken on purpose"
    assert Path(flows["02-broken"]["executed"]).is_file()


def test_json_to_stdout_leaves_stdout_to_the_summary(tmp_path: Path) -> None:
    _write(tmp_path / "01-ok.ipynb", "print(6 * 7)")
    result = CliRunner().invoke(main, ["run", "--notebooks", str(tmp_path), "--json", "-"])
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)  # nothing but the summary on standard output
    assert [(f["name"], f["result"]) for f in summary["flows"]] == [("01-ok", "passed")]
    assert summary["exitStatus"] == 0
    assert "1 of 1 flows passed" in result.stderr
    assert "Embedded sandbox listening at" in result.stderr


def test_skipped_notebooks_are_junit_skips_and_a_run_of_skips_fails() -> None:
    started = datetime(2026, 3, 14, 9, 27, tzinfo=UTC)
    results = [
        FlowResult("01-merchant", Path("nb/01-merchant.ipynb"), True, 1.25, None),
        FlowResult("02-controls", Path("nb/02-controls.ipynb"), False, 0.0, None, skipped="why"),
    ]
    [suite] = _parse(junit_xml(results, started=started))
    assert suite.get("timestamp") == "2026-03-14T09:27:00Z"
    assert (suite.get("tests"), suite.get("failures"), suite.get("skipped")) == ("2", "0", "1")
    skipped = suite.find("testcase[@name='02-controls']/skipped")
    assert skipped is not None
    assert skipped.get("message") == "why"
    assert exit_status(results) == 0
    assert exit_status(results[1:]) == 1  # nothing ran
    assert exit_status([]) == 1
    summary = json_summary(results, started=started, base_url="https://svc", external=True)
    assert summary["sandbox"] == "external"
    assert summary["flows"][1]["skipReason"] == "why"
    assert summary["seconds"] == 1.25


def test_the_report_options_are_checked_before_anything_runs(tmp_path: Path) -> None:
    _write(tmp_path / "01-ok.ipynb", 'open("ran", "w").close()')
    result = CliRunner().invoke(
        main, ["run", "--notebooks", str(tmp_path), "--junit", str(tmp_path)]
    )
    assert result.exit_code == 2  # a folder is no file to write: a usage error
    assert "is a directory" in result.output
    assert not (tmp_path / "ran").exists()
