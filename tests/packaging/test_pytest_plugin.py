"""The pytest plugin in a project of its own: the guide's example test passes with no set-up.

The project is a temporary folder holding the guide's example test and its
``conftest.py`` override; pytest runs in a subprocess of this environment, where the
package is installed with its ``pytest11`` entry point, exactly as a user's suite would.
"""

from __future__ import annotations

import ast
import importlib.metadata
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

import workbench.testing.pytest_plugin

from .project import (
    EXAMPLE,
    GUIDE,
    PYTEST_ARGS,
    ROOT,
    assert_project_passed,
    make_project,
    pytest_environment,
)

PLUGIN_FIXTURES = set(workbench.testing.pytest_plugin.__all__)


def test_the_guides_example_is_ten_lines_and_included_verbatim() -> None:
    lines = EXAMPLE.read_text("utf-8").splitlines()
    assert len(lines) <= 10
    assert '--8<-- "test_refund_settles.py"' in GUIDE.read_text("utf-8")


def test_a_fresh_project_gets_the_fixtures_by_installing_the_package(tmp_path: Path) -> None:
    project = make_project(tmp_path / "project")
    result = subprocess.run(
        [sys.executable, "-m", "pytest", *PYTEST_ARGS],
        cwd=project,
        env=pytest_environment(tmp_path),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert_project_passed(result)


def test_the_repositorys_own_runs_leave_the_entry_point_unloaded(
    request: pytest.FixtureRequest,
) -> None:
    [entry] = [
        e for e in importlib.metadata.entry_points(group="pytest11") if e.name == "workbench"
    ]
    assert entry.value == "workbench.testing.pytest_plugin"
    addopts = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["tool"]["pytest"][
        "ini_options"
    ]["addopts"]
    assert "-p no:workbench" in addopts
    assert request.config.pluginmanager.get_plugin("workbench") is None


def _fixtures_defined(path: Path) -> set[str]:
    """Names of the functions decorated as fixtures in ``path``."""
    found: set[str] = set()
    text = path.read_text("utf-8")
    if "fixture" not in text:  # both decorators below are spelled with it
        return found
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            for decorator in node.decorator_list:
                target = decorator.func if isinstance(decorator, ast.Call) else decorator
                if ast.unparse(target) in ("pytest.fixture", "fixture"):
                    found.add(node.name)
    return found


def test_no_fixture_of_the_repository_takes_a_plugin_fixtures_name() -> None:
    clashes = {
        str(path.relative_to(ROOT)): sorted(_fixtures_defined(path) & PLUGIN_FIXTURES)
        for path in [ROOT / "conftest.py", *sorted((ROOT / "tests").rglob("*.py"))]
    }
    assert {path: names for path, names in clashes.items() if names} == {}
    assert all(name.startswith("workbench_") for name in PLUGIN_FIXTURES)


def test_loading_the_plugin_imports_nothing_a_fixture_needs() -> None:
    code = (
        "import sys, pytest\n"
        "before = set(sys.modules)\n"
        "import workbench.testing.pytest_plugin\n"
        "print('\\n'.join(sorted(set(sys.modules) - before)))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert set(out.split()) == {
        "workbench",
        "workbench._lazy",
        "workbench._version",
        "workbench.testing",
        "workbench.testing.pytest_plugin",
    }
