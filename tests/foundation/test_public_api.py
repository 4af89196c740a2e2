"""The package's public surface: every exported name resolves; the sandbox loads lazily."""

from __future__ import annotations

import subprocess
import sys

import workbench


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
