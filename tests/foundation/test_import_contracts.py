"""The import contracts: the module-level cycle contract (`tools.import_contracts`) sees what
acyclic_siblings cannot, the edge contract covers every module that declares routes, and
the client contract every top-level module of workbench but the few that start a sandbox.

Each case is a package of its own, written to a temporary folder: the ring through a
package's ``__init__`` is the one ``acyclic_siblings`` lets through, and an import under
``TYPE_CHECKING`` closes a ring as well as any other.
"""

from __future__ import annotations

import importlib.util
import pkgutil
import textwrap
import tomllib
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import grimp
import pytest
from importlinter.domain import helpers
from importlinter.domain.imports import ModuleExpression

from tests.paths import ROOT
from tools.import_contracts import cycles


def _graph(root: Path, name: str, files: dict[str, str]) -> grimp.ImportGraph:
    for path, text in files.items():
        target = root / name / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(textwrap.dedent(text), encoding="utf-8")
    return grimp.build_graph(name, cache_dir=None)


@pytest.fixture
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.syspath_prepend(str(tmp_path))
    return tmp_path


def test_a_ring_through_a_package_init_is_a_cycle(root: Path) -> None:
    graph = _graph(
        root,
        "ringinit",
        {
            "__init__.py": "from ringinit.app import build\n",
            "app.py": "from ringinit.domain import charge\n\ndef build(): ...\n",
            "domain.py": (
                "from typing import TYPE_CHECKING\n\n"
                "if TYPE_CHECKING:\n    import ringinit\n\n"
                "def charge(): ...\n"
            ),
        },
    )
    assert cycles(graph, ["ringinit"]) == [
        ["ringinit", "ringinit.app", "ringinit.domain", "ringinit"]
    ]


def test_a_child_importing_its_own_package_is_a_cycle(root: Path) -> None:
    graph = _graph(
        root,
        "ringchild",
        {
            "__init__.py": "",
            "feature/__init__.py": "from ringchild.feature.work import Work\n",
            "feature/work.py": "from ringchild.feature import service\n\nclass Work: ...\n",
            "feature/service.py": "import ringchild.feature\n",
        },
    )
    found = cycles(graph, ["ringchild"])
    assert len(found) == 1
    assert set(found[0]) == {
        "ringchild.feature",
        "ringchild.feature.work",
        "ringchild.feature.service",
    }


def test_a_tree_of_imports_has_no_cycle(root: Path) -> None:
    graph = _graph(
        root,
        "tree",
        {
            "__init__.py": "from tree.app import build\n",
            "app.py": "from tree import domain, storage\n\ndef build(): ...\n",
            "domain.py": "from tree.storage import Database\n",
            "storage.py": "class Database: ...\n",
        },
    )
    assert cycles(graph, ["tree"]) == []


def test_workbench_has_no_cycle() -> None:
    assert cycles(grimp.build_graph("workbench", cache_dir=None), ["workbench"]) == []


def _edge_contract() -> dict[str, Any]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))
    contracts = config["tool"]["importlinter"]["contracts"]
    return next(c for c in contracts if c["id"] == "edge-only")


def _modules(graph: grimp.ImportGraph, expressions: list[str]) -> set[str]:
    return {
        module.name
        for expression in expressions
        for module in helpers.module_expression_to_modules(
            graph, ModuleExpression(expression), as_packages=False
        )
    }


def test_every_module_that_declares_routes_is_protected_by_the_edge_contract() -> None:
    graph = grimp.build_graph("workbench", cache_dir=None)
    protected = _modules(graph, _edge_contract()["protected_modules"])
    routers = {
        module
        for module in graph.modules
        if module.startswith("workbench.sandbox.") and "APIRouter(" in (_source(module) or "")
    }
    assert len(routers) >= 8  # the scan sees every feature's routes
    assert routers - protected == set(), "name the routes module `routes` (or put it in routes/)"


def _source(module: str) -> str | None:
    spec = importlib.util.find_spec(module)
    if spec is None or spec.origin is None or not spec.origin.endswith(".py"):
        return None
    return Path(spec.origin).read_text("utf-8")


def _contract(contract_id: str) -> dict[str, Any]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))
    contracts = config["tool"]["importlinter"]["contracts"]
    return next(c for c in contracts if c["id"] == contract_id)


#: Modules of the sandbox's root that are neither the edge, a feature, a shared domain
#: module nor the outer layer's, and why.
_UNCLASSIFIED = {
    "workbench.sandbox.openapi": "the OpenAPI document (its modules `document`, `examples` and "
    "`webhooks` are named one by one in the features' contract) and the Postman collection "
    "derived from it (`postman`), a generator run by the command line: it names the edge's "
    "public routes (the signature's list), as the outer layer may",
}


def test_every_module_of_the_sandbox_root_is_on_one_side_of_the_edge_contracts() -> None:
    """The edge contracts name the features and the shared modules one by one: a new module
    at the root of `workbench/sandbox` must be put on a side, or the contracts miss it."""
    graph = grimp.build_graph("workbench", cache_dir=None)
    children = set(graph.find_children("workbench.sandbox"))
    edge_side = {*_contract("edge-imports-no-feature")["source_modules"]}
    features_and_core = {*_contract("features-import-no-edge")["source_modules"]}
    features = {*_contract("edge-imports-no-feature")["forbidden_modules"]}
    assert features <= features_and_core
    outer = _modules(graph, _contract("edge-only")["protected_modules"])
    named = edge_side | features_and_core | outer | set(_UNCLASSIFIED)
    assert len(children) >= 30  # the scan sees the sandbox's root
    assert children - named == set(), "name the module in a contract of pyproject.toml"
    assert edge_side & features_and_core == set()


#: The top-level modules and subpackages of workbench that may import the sandbox, and
#: why. Every other one is a source module of the client-without-sandbox contract.
SANDBOX_STARTERS = {
    "workbench.sandbox": "the sandbox itself",
    "workbench.cli": "`workbench sandbox`, `lab` and `run` start one",
    "workbench.__main__": "`python -m workbench`, the command line",
    "workbench.testing": "`running_sandbox` and the pytest plugin's fixtures start one",
}


def _client_contract() -> dict[str, Any]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))
    contracts = config["tool"]["importlinter"]["contracts"]
    return next(c for c in contracts if c["id"] == "client-without-sandbox")


def uncovered(package: str, sources: list[str], allowed: Iterable[str]) -> list[str]:
    """The top-level modules and subpackages of ``package`` in neither list."""
    spec = importlib.util.find_spec(package)
    assert spec is not None
    assert spec.submodule_search_locations is not None
    children = pkgutil.iter_modules(spec.submodule_search_locations, f"{package}.")
    return sorted({child.name for child in children} - set(sources) - set(allowed))


def test_the_client_contract_covers_every_module_of_workbench_but_the_sandbox_starters() -> None:
    contract = _client_contract()
    sources = contract["source_modules"]
    assert contract["type"] == "forbidden"
    assert contract["forbidden_modules"] == ["workbench.sandbox"]
    assert uncovered("workbench", sources, SANDBOX_STARTERS) == [], (
        "add the module to the contract's source_modules in pyproject.toml, or (if it must"
        " import the sandbox) to SANDBOX_STARTERS with the reason"
    )
    assert set(sources) & set(SANDBOX_STARTERS) == set()
    assert uncovered("workbench", [], []) == sorted([*sources, *SANDBOX_STARTERS])  # none stale
    assert sources == sorted(sources)


def test_a_new_module_in_neither_list_is_named(root: Path) -> None:
    for path in ("__init__.py", "client.py", "server/__init__.py", "helpers/__init__.py"):
        (root / "newroot" / path).parent.mkdir(parents=True, exist_ok=True)
        (root / "newroot" / path).write_text("", encoding="utf-8")
    (root / "newroot" / "extra.py").write_text("", encoding="utf-8")
    assert uncovered("newroot", ["newroot.client"], ["newroot.server"]) == [
        "newroot.extra",
        "newroot.helpers",
    ]
