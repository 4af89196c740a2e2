"""The package's public surface: every exported name resolves; the sandbox loads lazily."""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

import workbench
import workbench.models
import workbench.testing


def test_every_exported_name_resolves() -> None:
    missing = [name for name in workbench.__all__ if getattr(workbench, name, None) is None]
    assert missing == []


def test_importing_workbench_does_not_load_the_web_server_stack() -> None:
    code = "import sys, workbench; print('fastapi' in sys.modules, 'uvicorn' in sys.modules)"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.split() == ["False", "False"]


def test_python_dash_m_workbench_is_the_cli() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "workbench", "--version"], capture_output=True, text=True, check=True
    ).stdout
    assert workbench.__version__ in out


def _modules_after(code: str) -> set[str]:
    """The modules a new interpreter holds after running ``code``."""
    out = subprocess.run(
        [sys.executable, "-c", f"import sys\n{code}\nprint('\\n'.join(sys.modules))"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return set(out.split())


def test_importing_workbench_loads_only_the_lazy_table_and_the_version() -> None:
    loaded = {m for m in _modules_after("import workbench") if m.startswith("workbench")}
    assert loaded == {"workbench", "workbench._lazy", "workbench._version"}
    assert {"httpx", "httpx2"} & _modules_after("import workbench") == set()


def test_a_new_client_loads_neither_pydantic_nor_the_models_nor_the_webhooks() -> None:
    loaded = _modules_after(
        "import workbench\nworkbench.Client('pk_test_x', 'sk_test_x', 'http://127.0.0.1:9').close()"
    )
    assert "workbench._client" in loaded
    assert {m for m in loaded if m.split(".")[0] in ("pydantic", "pydantic_core")} == set()
    assert {m for m in loaded if m.startswith("workbench.models.")} == set()
    unneeded = {"workbench.webhooks", "workbench.tracking", "workbench.waiting", "asyncio"}
    assert loaded & unneeded == set()


def test_the_models_load_with_the_first_answer_that_needs_them() -> None:
    loaded = _modules_after(
        "import httpx2, workbench\n"
        "body = {'businessTime': '2025-01-01T00:00:00Z'}\n"
        "def answer(request): return httpx2.Response(200, json=body)\n"
        "with workbench.Client('pk_test_x', 'sk_test_x', 'http://127.0.0.1:9',\n"
        "                      http_client=httpx2.Client(transport=httpx2.MockTransport(answer),\n"
        "                                               base_url='http://127.0.0.1:9')) as c:\n"
        "    assert type(c.sandbox.advance_clock(1)).__name__ == 'BusinessTime'\n"
    )
    assert {"pydantic", "workbench.models.sandbox"} <= loaded
    assert "workbench.models.payments" not in loaded  # only the module of the model used


def _type_checking_imports(package: ModuleType) -> dict[str, set[str]]:
    """Module -> names imported under ``if TYPE_CHECKING:`` in ``package``'s __init__."""
    tree = ast.parse(Path(package.__file__ or "").read_text("utf-8"))
    [block] = [
        node
        for node in tree.body
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING"
    ]
    found: dict[str, set[str]] = {}
    for node in block.body:
        assert isinstance(node, ast.ImportFrom)
        assert node.module
        found.setdefault(node.module, set()).update(alias.name for alias in node.names)
    return found


@pytest.mark.parametrize(
    "package", [workbench, workbench.models, workbench.testing], ids=lambda p: p.__name__
)
def test_what_type_checkers_see_is_what_is_loaded_and_exported(package: ModuleType) -> None:
    seen = _type_checking_imports(package)
    loaded: dict[str, set[str]] = {}
    for name, module in package._EXPORTS.modules.items():
        loaded.setdefault(module, set()).add(name)
    assert loaded == seen
    exported = set(package.__all__) - {"__version__"}
    assert {name for names in seen.values() for name in names} == exported
    for name, module in package._EXPORTS.modules.items():
        assert getattr(package, name) is getattr(importlib.import_module(module), name)
    assert exported <= set(dir(package))


def test_an_unknown_name_is_an_attribute_error_naming_it() -> None:
    with pytest.raises(AttributeError, match="'workbench' has no attribute 'Clinet'"):
        _ = workbench.Clinet  # type: ignore[attr-defined]
    with pytest.raises(ImportError, match="Clinet"):
        from workbench import Clinet  # type: ignore[attr-defined]  # noqa: F401


def test_a_submodule_is_reached_from_the_package_as_when_it_was_imported_eagerly() -> None:
    code = (
        "import sys, workbench\n"
        "assert 'workbench.webhooks' not in sys.modules\n"
        "print(workbench.webhooks.construct_event.__module__, workbench.models.payments.__name__)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.split() == ["workbench.webhooks._verify", "workbench.models.payments"]
