"""jsonschema's IRI parsers stay out of the processes that read notebooks.

Importing ``rfc3987_syntax`` (jsonschema's "iri" format checker) costs about 2 s of CPU;
``workbench run``, ``workbench lab``'s JupyterLab and the test suite's pytest processes
leave it out (`workbench.notebook._no_iri`, the root conftest.py), and nbformat still
validates.
"""

from __future__ import annotations

import subprocess
import sys
from importlib.metadata import PackageNotFoundError, version

import nbformat
import pytest


def _python(code: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    return done.stdout.strip()


def test_the_parsers_are_installed_here() -> None:
    """The checks below mean something only where the package is installed."""
    try:
        version("rfc3987-syntax")
    except PackageNotFoundError:
        pytest.fail("rfc3987-syntax is not installed: JupyterLab's dependencies bring it")


def test_this_pytest_process_loaded_nbval_without_them() -> None:
    assert "nbval.plugin" in sys.modules
    assert sys.modules.get("rfc3987_syntax", "absent") is None


def test_the_notebook_runner_imports_nbformat_without_them() -> None:
    code = (
        "import sys, workbench.notebook.runner as r, nbformat;"
        "nbformat.validate(nbformat.v4.new_notebook());"
        "print(repr(sys.modules.get('rfc3987_syntax', 'absent')))"
    )
    assert _python(code) == "None"


def test_workbench_lab_runs_jupyterlab_without_them() -> None:
    """`workbench lab`'s JupyterLab command: JupyterLab's answer, and no IRI parsers."""
    from jupyterlab import __version__

    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "workbench.notebook._lab_main", "--version"],
        capture_output=True, text=True, timeout=120, check=True,
    )  # fmt: skip
    assert done.stdout.split() == [__version__]
    imported = {line.rpartition("|")[2].strip() for line in done.stderr.splitlines()}
    assert "jupyterlab_server.app" in imported  # JupyterLab's server was loaded ...
    assert "jsonschema" in imported  # ... and jsonschema with it
    # Refused, rfc3987_syntax still shows as a line; its grammars would load lark.
    assert "rfc3987_syntax.syntax_helpers" not in imported
    assert not {name for name in imported if name.split(".")[0] == "lark"}


def test_a_process_that_imported_jsonschema_first_keeps_them() -> None:
    code = (
        "import sys, jsonschema, workbench.notebook._no_iri;"
        "print(type(sys.modules.get('rfc3987_syntax')).__name__)"
    )
    assert _python(code) == "module"


def test_nbformat_still_refuses_an_invalid_notebook() -> None:
    cell: dict[str, object] = {"id": "a", "cell_type": "code", "source": "1", "metadata": {}}
    cell.update(execution_count=None, outputs=[{"output_type": "no-such-output"}])
    notebook = {"cells": [cell], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    with pytest.raises(nbformat.ValidationError):
        nbformat.validate(notebook)
