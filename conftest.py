"""Repository-wide pytest hooks: a sandbox for the notebook kernels.

nbval runs each notebook in its own Jupyter kernel, a separate process that no
pytest fixture or mock reaches. When the session is going to execute notebooks,
a fresh sandbox (new temporary SQLite database, free 127.0.0.1 port) is started
in `pytest_sessionstart`, before any kernel, and ``WORKBENCH_*`` are exported
into ``os.environ`` so that every kernel inherits them; `pytest_sessionfinish`
stops it and restores the environment.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

import pytest

from workbench.config import (
    DEFAULT_API_KEY,
    DEFAULT_SECRET_KEY,
    ENV_API_KEY,
    ENV_BASE_URL,
    ENV_SECRET_KEY,
)

ROOT = Path(__file__).resolve().parent
NOTEBOOKS = ROOT / "notebooks"
_STATE = pytest.StashKey[dict[str, Any]]()


def _runs_notebooks(config: pytest.Config) -> bool:
    """Whether nbval is on and a notebook under ``notebooks/`` can be collected."""
    if not (config.getoption("nbval", False) or config.getoption("nbval_lax", False)):
        return False
    for arg in config.args:
        path = Path(arg.split("::", 1)[0])
        path = (Path(config.invocation_params.dir) / path).resolve()
        if path == NOTEBOOKS or NOTEBOOKS in path.parents or path in NOTEBOOKS.parents:
            return True
    return False


def pytest_sessionstart(session: pytest.Session) -> None:
    """Start the notebooks' sandbox and point ``WORKBENCH_*`` at it."""
    config = session.config
    if not _runs_notebooks(config):
        return
    from workbench.sandbox import SandboxConfig, SandboxServer

    tmp = tempfile.TemporaryDirectory(prefix="workbench-nbval-")
    sandbox = SandboxConfig(
        db_url=f"sqlite:///{Path(tmp.name) / 'sandbox.db'}",
        api_key=DEFAULT_API_KEY,
        secret_key=DEFAULT_SECRET_KEY,
        run_reconciler_in_background=False,  # the notebooks tick it where the lesson needs it
    )
    server = SandboxServer(sandbox).start()
    names = (ENV_BASE_URL, ENV_API_KEY, ENV_SECRET_KEY)
    saved = {name: os.environ.get(name) for name in names}
    os.environ[ENV_BASE_URL] = server.base_url
    os.environ[ENV_API_KEY] = sandbox.api_key
    os.environ[ENV_SECRET_KEY] = sandbox.secret_key
    config.stash[_STATE] = {"server": server, "tmp": tmp, "saved": saved}


def pytest_sessionfinish(session: pytest.Session) -> None:
    """Stop the notebooks' sandbox, delete its database, restore the environment."""
    state = session.config.stash.get(_STATE, None)
    if state is None:
        return
    state["server"].stop()
    state["tmp"].cleanup()
    for name, value in state["saved"].items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value
    del session.config.stash[_STATE]
