"""``workbench run``: per-notebook results, a failure never reported as success, stored outputs
replaced only for a notebook that ran through."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import nbformat
import pytest
from click.testing import CliRunner
from nbformat.v4 import new_code_cell, new_notebook

from workbench.cli.run import run
from workbench.notebook_runner import execute_notebook


def _write(path: Path, source: str) -> None:
    book = new_notebook(cells=[new_code_cell(source)])
    book.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    nbformat.write(book, path)


def test_a_failing_notebook_fails_the_run_and_keeps_its_stored_outputs(tmp_path: Path) -> None:
    _write(
        tmp_path / "01-ok.ipynb",
        'import os\nprint(os.environ["WORKBENCH_BASE_URL"].startswith("http://127.0.0.1:"))',
    )
    _write(tmp_path / "02-broken.ipynb", 'assert False, "broken on purpose"')
    result = CliRunner().invoke(run, ["--notebooks", str(tmp_path), "--update-stored"])
    assert result.exit_code == 1, result.output
    lines = result.output.splitlines()
    assert any(line.split()[:2] == ["01-ok", "passed"] for line in lines), result.output
    assert any(line.split()[:2] == ["02-broken", "FAILED"] for line in lines), result.output
    assert "1 of 2 flows passed" in result.output
    assert "broken on purpose" in result.output
    stored_ok = nbformat.read(tmp_path / "01-ok.ipynb", as_version=4)
    assert stored_ok.cells[0].outputs[0]["text"] == "True\n"
    stored_broken = nbformat.read(tmp_path / "02-broken.ipynb", as_version=4)
    assert stored_broken.cells[0].outputs == []
    executed = nbformat.read(tmp_path / "_executed" / "02-broken.ipynb", as_version=4)
    assert executed.cells[0].outputs[0]["output_type"] == "error"
    assert "widgets" not in executed.metadata


def test_no_notebook_is_not_a_success(tmp_path: Path) -> None:
    result = CliRunner().invoke(run, ["--notebooks", str(tmp_path)])
    assert result.exit_code == 1
    assert "no flow ran" in result.output
    assert "passed" not in result.output


def test_kernels_run_over_private_sockets_without_warnings(
    tmp_path: Path, capfd: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # A temporary folder of this test's own: other runs on the machine use the shared one.
    own_tmp = tmp_path / "tmp"
    own_tmp.mkdir()
    monkeypatch.setenv("TMPDIR", str(own_tmp))
    monkeypatch.setattr(tempfile, "tempdir", None)  # gettempdir() reads TMPDIR again
    assert tempfile.gettempdir() == str(own_tmp)
    _write(tmp_path / "ok.ipynb", "print(6 * 7)")
    result = execute_notebook(tmp_path / "ok.ipynb", env=dict(os.environ), output=None)
    assert result.passed, result.error
    err = capfd.readouterr().err
    if os.name == "posix":
        assert "without encryption" not in err
    assert "Traceback" not in err
    assert not list(own_tmp.glob("wb-kernel-*"))
