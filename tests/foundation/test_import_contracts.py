"""The module-level cycle contract (`tools.import_contracts`) sees what acyclic_siblings cannot.

Each case is a package of its own, written to a temporary folder: the ring through a
package's ``__init__`` is the one ``acyclic_siblings`` lets through, and an import under
``TYPE_CHECKING`` closes a ring as well as any other.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import grimp
import pytest

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
