"""The pytest plugin in a project of its own: the guide's example test passes with no set-up.

The project is a temporary folder holding the guide's example test and its
``conftest.py`` override; pytest runs in a subprocess of this environment, where the
package is installed with its ``pytest11`` entry point, exactly as a user's suite would.
"""

from __future__ import annotations

import ast
import importlib.metadata
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

import workbench.pytest_plugin

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "docs" / "recipes" / "test_refund_settles.py"
GUIDE = ROOT / "docs" / "testing.md"
PLUGIN_FIXTURES = set(workbench.pytest_plugin.__all__)

#: A test of the project's own, beside the guide's: the rest of the fixtures, and the
#: override of ``workbench_sandbox_options`` taken from the guide's conftest.py.
OWN_TEST = """
import pytest

from workbench import Client, ServerError


def test_options_fail_next_and_env(workbench_sandbox, workbench_fail_next, workbench_env):
    assert workbench_sandbox.config.latency_ms == 20
    assert workbench_sandbox.config.db_url.endswith("/sandbox.db")
    workbench_fail_next("500")
    with Client(max_retries=0) as client, pytest.raises(ServerError):
        client.payments.charge_card(
            transaction_id="own-1", amount=100, card_token="tok_test_success"
        )


@pytest.mark.anyio
async def test_async_client(workbench_async_client):
    payment = await workbench_async_client.payments.charge_card(
        transaction_id="own-2", amount=100, card_token="tok_test_success"
    )
    assert payment.status == "captured"
"""


def guide_conftest() -> str:
    """The ``conftest.py`` block of the guide's page."""
    found = re.search(r'```python title="conftest.py"\n(.*?)```', GUIDE.read_text("utf-8"), re.S)
    assert found, "the guide shows no conftest.py"
    return found[1]


def make_project(folder: Path) -> Path:
    """A user's project: the guide's example test and conftest.py, and a test of its own."""
    tests = folder / "tests"
    tests.mkdir(parents=True)
    (tests / "test_refund_settles.py").write_text(EXAMPLE.read_text("utf-8"), "utf-8")
    (tests / "test_own.py").write_text(OWN_TEST, "utf-8")
    (folder / "conftest.py").write_text(guide_conftest(), "utf-8")
    return folder


def pytest_environment(tmp: Path) -> dict[str, str]:
    """This environment without what would make pytest read another configuration."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("PYTEST_", "WORKBENCH_", "COV_", "COVERAGE_"))
    }
    env["TMPDIR"] = str(tmp)
    return env


def test_the_guides_example_is_ten_lines_and_included_verbatim() -> None:
    lines = EXAMPLE.read_text("utf-8").splitlines()
    assert len(lines) <= 10
    assert '--8<-- "test_refund_settles.py"' in GUIDE.read_text("utf-8")


def test_a_fresh_project_gets_the_fixtures_by_installing_the_package(tmp_path: Path) -> None:
    project = make_project(tmp_path / "project")
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-v", "-p", "no:cacheprovider", "-W", "error"],
        cwd=project,
        env=pytest_environment(tmp_path),
        capture_output=True,
        text=True,
        timeout=300,
    )
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    for test in (
        "tests/test_refund_settles.py::test_an_async_refund_settles",
        "tests/test_own.py::test_options_fail_next_and_env",
        "tests/test_own.py::test_async_client[asyncio]",
    ):
        assert f"{test} PASSED" in output, output
    assert re.search(r"\b3 passed\b", output), output
    assert "warning" not in output.lower(), output


def test_the_repositorys_own_runs_leave_the_entry_point_unloaded(
    request: pytest.FixtureRequest,
) -> None:
    [entry] = [
        e for e in importlib.metadata.entry_points(group="pytest11") if e.name == "workbench"
    ]
    assert entry.value == "workbench.pytest_plugin"
    addopts = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["tool"]["pytest"][
        "ini_options"
    ]["addopts"]
    assert "-p no:workbench" in addopts
    assert request.config.pluginmanager.get_plugin("workbench") is None


def _fixtures_defined(path: Path) -> set[str]:
    """Names of the functions decorated as fixtures in ``path``."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text("utf-8"))):
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
