"""The packaging tests' shared fixture: the built wheel and its installs."""

from __future__ import annotations

import pytest

from tests.shared import run_folder

from .installs import Installs


@pytest.fixture(scope="session")
def installs(tmp_path_factory: pytest.TempPathFactory) -> Installs:
    """The built wheel and its installs, shared by the tests of this run (every worker's)."""
    return Installs(run_folder(tmp_path_factory, "wheel"))
