"""What the edge's tests share beyond `tests/sandbox/conftest.py`."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.postgres import database_url
from workbench.sandbox import SandboxConfig
from workbench.sandbox.runtime import SandboxRuntime


@pytest.fixture(params=["sqlite", "postgres"])
def two_runtimes(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[list[SandboxRuntime]]:
    """Two opened sandbox runtimes on one database, each with its own engine, as two
    workers have (no HTTP server), once per backend."""
    with database_url(request.param, tmp_path) as url:
        runtimes = [SandboxRuntime(SandboxConfig(db_url=url)).open() for _ in range(2)]
        try:
            yield runtimes
        finally:
            for runtime in runtimes:
                runtime.stop()
