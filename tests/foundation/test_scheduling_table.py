"""The root conftest's scheduling tables name test files that exist.

A file renamed or deleted leaves its entry behind, silently: its tests lose their shared
worker (and build their module fixtures once per worker) or their place in the order.
The tables are read from the conftest's source, which no test module imports.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TABLES = ("_ONE_WORKER", "_EXPECTED_SECONDS")


def _table_keys() -> list[str]:
    keys: set[str] = set()
    for node in ast.parse((ROOT / "conftest.py").read_text("utf-8")).body:
        target = node.target if isinstance(node, ast.AnnAssign) else None
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target = node.targets[0]
        if isinstance(target, ast.Name) and target.id in TABLES and node.value is not None:
            keys.update(ast.literal_eval(node.value))
    return sorted(keys)


def test_the_tables_are_found() -> None:
    assert len(_table_keys()) > 20


@pytest.mark.parametrize("prefix", _table_keys())
def test_every_scheduling_entry_names_a_test_file_or_folder(prefix: str) -> None:
    path = ROOT / prefix.split("::", 1)[0]

    assert path.exists(), f"{prefix} is in the root conftest's tables but not in the tree"
