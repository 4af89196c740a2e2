"""The root conftest's scheduling tables name test files that exist.

A file renamed or deleted leaves its entry behind, silently: its tests lose their shared
worker (and build their module fixtures once per worker) or their place in the order.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import conftest

ROOT = Path(conftest.__file__).resolve().parent


@pytest.mark.parametrize("prefix", sorted({*conftest._ONE_WORKER, *conftest._EXPECTED_SECONDS}))
def test_every_scheduling_entry_names_a_test_file_or_folder(prefix: str) -> None:
    path = ROOT / prefix.split("::", 1)[0]

    assert path.exists(), f"{prefix} is in the root conftest's tables but not in the tree"
