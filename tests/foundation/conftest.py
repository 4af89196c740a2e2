"""Fixtures of the command-line tests that need a running sandbox."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from workbench._client import Client
from workbench.config import DEFAULT_API_KEY, DEFAULT_SECRET_KEY
from workbench.testing import running_sandbox


@pytest.fixture(scope="module")
def sandbox_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A sandbox of the module's own, whose reconciler runs only when a test ticks it."""
    folder = tmp_path_factory.mktemp("cli-sandbox")
    with running_sandbox(db_dir=folder, run_reconciler_in_background=False) as server:
        yield server.base_url


@pytest.fixture
def client(sandbox_url: str) -> Iterator[Client]:
    """A client of the demo merchant, its data reset first."""
    with Client(DEFAULT_API_KEY, DEFAULT_SECRET_KEY, sandbox_url) as c:
        c.sandbox.reset()
        yield c
