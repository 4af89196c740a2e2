"""Fixtures of the flow tests: one sandbox on a free 127.0.0.1 port for the module run."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from workbench._client import Client
from workbench.config import DEFAULT_API_KEY, DEFAULT_SECRET_KEY
from workbench.testing import running_sandbox


@pytest.fixture(scope="session")
def sandbox_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A fresh sandbox (temporary SQLite file) serving for the whole session."""
    folder = tmp_path_factory.mktemp("flows-sandbox")
    # the flows tick the reconciler themselves
    with running_sandbox(db_dir=folder, run_reconciler_in_background=False) as server:
        yield server.base_url


@pytest.fixture
def client(sandbox_url: str) -> Iterator[Client]:
    """A client of the demo merchant, its data reset first."""
    with Client(DEFAULT_API_KEY, DEFAULT_SECRET_KEY, sandbox_url) as c:
        c.sandbox.reset()
        yield c
