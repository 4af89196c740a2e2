"""A user's project for the pytest plugin: the guide's example test, its conftest.py and a
test of the project's own, in a folder of its own."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "docs" / "recipes" / "test_refund_settles.py"
GUIDE = ROOT / "docs" / "testing.md"
#: How the project's tests are run: verbose (each test's outcome), warnings as errors.
PYTEST_ARGS = ("-v", "-p", "no:cacheprovider", "-W", "error")
#: The project's tests, each of which must pass.
PROJECT_TESTS = (
    "tests/test_refund_settles.py::test_an_async_refund_settles",
    "tests/test_own.py::test_options_fail_next_and_env",
    "tests/test_own.py::test_async_client[asyncio]",
)

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
    """This environment without what would make pytest read another configuration.

    Nor nbval, which this repository's environment has and a user's project does not:
    loading it (nbformat, JSON Schema's formats) took a quarter of the run.
    """
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("PYTEST_", "WORKBENCH_", "COV_", "COVERAGE_"))
    }
    env.update(TMPDIR=str(tmp), PYTEST_ADDOPTS="-p no:nbval")
    return env


def assert_project_passed(result: subprocess.CompletedProcess[str]) -> None:
    """Every test of the project passed, with no warning."""
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    for test in PROJECT_TESTS:
        assert f"{test} PASSED" in output, output
    assert re.search(rf"\b{len(PROJECT_TESTS)} passed\b", output), output
    assert "warning" not in output.lower(), output
