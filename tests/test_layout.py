"""The test suite's layout: conftests hold fixtures and hooks, and the folders mirror the code.

pytest loads each ``conftest.py`` itself, for the folder it sits in; it is where fixtures
and hooks go, not a module to import. A helper that several tests use lives in an
ordinary module named for what it holds (``tests/paths.py``, ``tests/sandbox/clients.py``,
``tests/client/script.py``...), beside the conftest or in ``tests/`` when several folders
use it, and the conftest imports it too.

A fixture is defined once: a conftest does not define again a fixture that a conftest
above it defines (a test would get the nearer one, and two copies drift apart); a folder
that needs something more adds a fixture of another name.

The sandbox's tests mirror its packages: each package of ``workbench/sandbox`` (a
feature: payments, refunds, sessions...) has a folder of ``tests/sandbox`` of the same
name holding its tests, every such folder names a package, and no test module left
directly in ``tests/sandbox`` is named after one.

The scan is of the source (``ast``), so a test module that is skipped or never collected
is checked as well. The repository's root ``conftest.py`` (session hooks and their
private helpers) is checked for imports of a conftest, not for what it defines.

Test modules and tests are named for the behaviour they check, never after an issue's
or a rule's number (``test_issue32_...``, ``test_rule4_...``): a number means nothing
to a reader without the tracker it came from.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from tests.paths import ROOT

TESTS = ROOT / "tests"
SANDBOX = ROOT / "workbench" / "sandbox"

#: Packages of the sandbox whose tests need something ``tests/sandbox`` does not have,
#: and the module that tests them.
_TESTED_ELSEWHERE = {"front": "tests/browser/test_front_door.py"}
#: Fixtures a conftest defines again on purpose, and why.
_OVERRIDES = {
    ("tests/client/live/conftest.py", "client"): "the live tests' client talks to a sandbox",
}

#: Module-level names a conftest may set besides its fixtures and hooks (pytest reads them).
_CONFTEST_NAMES = {"__all__", "pytest_plugins", "pytestmark", "collect_ignore",
                   "collect_ignore_glob"}  # fmt: skip


def conftest_imports(source: str) -> list[str]:
    """The import statements in ``source`` that import a conftest module, one per line.

    Catches ``from tests.sandbox.conftest import x``, ``from .conftest import x``,
    ``from . import conftest`` and ``import tests.sandbox.conftest``.
    """
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            modules = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            modules = [module, *(f"{module}.{alias.name}" for alias in node.names)]
        else:
            continue
        if any("conftest" in module.split(".") for module in modules):
            found.append(f"{node.lineno}: {ast.unparse(node)}")
    return found


def _is_fixture(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    for decorator in node.decorator_list:
        target = decorator.func if isinstance(decorator, ast.Call) else decorator
        if ast.unparse(target) in ("pytest.fixture", "fixture"):
            return True
    return False


def _allowed_in_conftest(node: ast.stmt) -> bool:
    if isinstance(node, ast.Import | ast.ImportFrom):
        return True
    if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
        return isinstance(node.value.value, str)  # the module's docstring
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
        return _is_fixture(node) or node.name.startswith("pytest_")
    if isinstance(node, ast.Assign | ast.AnnAssign):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        return all(isinstance(t, ast.Name) and t.id in _CONFTEST_NAMES for t in targets)
    if isinstance(node, ast.If):  # ``if TYPE_CHECKING:`` imports
        return all(isinstance(n, ast.Import | ast.ImportFrom) for n in node.body + node.orelse)
    return False


def not_fixtures_or_hooks(source: str) -> list[str]:
    """The top-level statements of a conftest's ``source`` that are neither fixture nor hook.

    Imports, the docstring and the names pytest reads (``__all__``, ``pytest_plugins``...)
    may stay; a helper function, a class or a constant belongs in a module of its own.
    """
    found = []
    for node in ast.parse(source).body:
        if not _allowed_in_conftest(node):
            name = getattr(node, "name", None) or ast.unparse(node).splitlines()[0]
            found.append(f"{node.lineno}: {name}")
    return found


def _test_sources() -> list[Path]:
    return [ROOT / "conftest.py", *sorted(TESTS.rglob("*.py"))]


def test_no_module_of_the_tests_imports_a_conftest() -> None:
    found = {
        str(path.relative_to(ROOT)): lines
        for path in _test_sources()
        if (lines := conftest_imports(path.read_text("utf-8")))
    }
    assert found == {}, "import helpers from a module of their own, not from a conftest"


def test_conftests_hold_only_fixtures_and_hooks() -> None:
    conftests = sorted(TESTS.rglob("conftest.py"))
    assert len(conftests) >= 8  # the scan sees the suite's conftests
    found = {
        str(path.relative_to(ROOT)): lines
        for path in conftests
        if (lines := not_fixtures_or_hooks(path.read_text("utf-8")))
    }
    assert found == {}, "move these to a module named for what it holds"


@pytest.mark.parametrize(
    "line",
    [
        "from tests.sandbox.conftest import assert_envelope",
        "from .conftest import ROOT",
        "from ..conftest import ROOT",
        "from . import conftest",
        "from tests.sandbox import conftest as sandbox_fixtures",
        "import tests.sandbox.conftest",
    ],
)
def test_the_scan_finds_each_way_of_importing_a_conftest(line: str) -> None:
    source = f"import os\n\n\ndef helper() -> None:\n    {line}\n"
    assert conftest_imports(source) == [f"5: {line}"]


def test_the_scan_leaves_modules_named_like_a_conftest_alone() -> None:
    source = "from tests.sandbox.clients import signed_client\nimport conftest_tools\n"
    assert conftest_imports(source) == []


def test_the_conftest_scan_names_helpers_and_keeps_fixtures_and_hooks() -> None:
    source = '''"""Fixtures."""
from typing import TYPE_CHECKING
import pytest
if TYPE_CHECKING:
    from pathlib import Path
__all__ = ["db"]
ROOT = "."
@pytest.fixture(scope="session")
def db() -> None: ...
@pytest.fixture
async def session() -> None: ...
def pytest_configure(config: object) -> None: ...
def txn() -> str: ...
class Shots: ...
'''
    assert not_fixtures_or_hooks(source) == ["7: ROOT = '.'", "13: txn", "14: Shots"]


def fixture_names(source: str) -> set[str]:
    """The fixtures a conftest's ``source`` defines at its top level."""
    return {
        node.name
        for node in ast.parse(source).body
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and _is_fixture(node)
    }


def redefined_fixtures(conftests: dict[Path, set[str]]) -> dict[Path, set[str]]:
    """For each conftest's folder, the fixtures it defines that a conftest above also does."""
    found: dict[Path, set[str]] = {}
    for folder, names in conftests.items():
        above = set().union(*(conftests.get(parent, set()) for parent in folder.parents))
        if names & above:
            found[folder] = names & above
    return found


def test_no_conftest_defines_again_a_fixture_from_a_conftest_above_it() -> None:
    conftests = {
        path.parent: fixture_names(path.read_text("utf-8"))
        for path in [ROOT / "conftest.py", *TESTS.rglob("conftest.py")]
    }
    found = {
        str((folder / "conftest.py").relative_to(ROOT)): names
        for folder, names in redefined_fixtures(conftests).items()
    }
    for (where, name), _why in _OVERRIDES.items():
        found.get(where, set()).discard(name)
    assert {where: names for where, names in found.items() if names} == {}, (
        "give the folder's fixture a name of its own, or use the one above"
    )


def test_the_redefinition_scan_sees_a_fixture_defined_again_below_only() -> None:
    top, below, beside = Path("/t"), Path("/t/sandbox/payments"), Path("/t/client")
    conftests = {top: {"server", "client"}, below: {"client", "card"}, beside: {"card"}}
    assert redefined_fixtures(conftests) == {below: {"client"}}
    source = "import pytest\n@pytest.fixture\ndef server(): ...\ndef helper(): ...\n"
    assert fixture_names(source) == {"server"}


def _sandbox_packages() -> set[str]:
    return {path.parent.name for path in SANDBOX.glob("*/__init__.py")}


def test_the_sandbox_tests_have_a_folder_per_package_of_the_sandbox() -> None:
    packages = _sandbox_packages()
    folders = {path.parent.name for path in (TESTS / "sandbox").glob("*/test_*.py")}
    assert len(packages) >= 6  # the scan sees the feature packages
    assert folders - packages == set(), "a folder of tests/sandbox names no package"
    assert packages - folders - set(_TESTED_ELSEWHERE) == set(), "a package has no test folder"
    for module in _TESTED_ELSEWHERE.values():
        assert (ROOT / module).is_file(), module


def test_no_test_left_beside_the_folders_is_named_after_a_package() -> None:
    packages = _sandbox_packages()
    misplaced = sorted(
        path.name
        for path in (TESTS / "sandbox").glob("test_*.py")
        if any(path.stem == f"test_{p}" or path.stem.startswith(f"test_{p}_") for p in packages)
    )
    assert misplaced == [], "move it to the package's folder"


_NUMBERED = re.compile(r"(?:^|_)(?:issue|rule)\d+(?:_|$)")


def _named_after_a_number() -> list[str]:
    found = []
    for path in sorted(TESTS.rglob("test_*.py")):
        module = path.relative_to(ROOT).as_posix()
        if _NUMBERED.search(path.stem):
            found.append(module)
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
                and node.name.startswith("test")
                and _NUMBERED.search(node.name)
            ):
                found.append(f"{module}::{node.name}")
    return found


def test_no_test_is_named_after_an_issue_or_a_rule_number() -> None:
    assert _named_after_a_number() == [], "name it for the behaviour it checks"


@pytest.mark.parametrize(
    ("name", "numbered"),
    [
        ("test_issue32_pages", True),
        ("test_rule4_request_id", True),
        ("test_issue32_rule4_a_turkish_transaction_id", True),
        ("test_rules_hold", False),
        ("test_ruler_of_the_schedule", False),
        ("test_a_uuid4_request_id", False),
    ],
)
def test_the_number_scan_tells_a_numbered_name_from_a_word(name: str, numbered: bool) -> None:
    assert bool(_NUMBERED.search(name)) is numbered
