"""``workbench sandbox --workers 2`` as a subprocess on a database of a test's own.

Shared by the sandbox tests that must hold across worker processes (the renewal race,
issue 32's rules). The reconciler is off unless asked for, so the only passes are the
clock advances and ticks the test sends.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import time
from collections.abc import Iterator

import httpx2

from tests.ports import free_port

__all__ = ["two_worker_sandbox"]


def _answers(base: str) -> bool:
    try:
        return httpx2.get(base + "/openapi.json", timeout=2).status_code == 200
    except httpx2.TransportError:
        return False


@contextlib.contextmanager
def two_worker_sandbox(db_url: str, *, reconciler: bool = False) -> Iterator[str]:
    """The base URL of a two-worker sandbox on ``db_url``, stopped afterwards."""
    port = free_port()
    env = {**os.environ, "WORKBENCH_API_KEY": "", "WORKBENCH_SECRET_KEY": ""}
    command = [sys.executable, "-m", "workbench", "sandbox", "--workers", "2"]
    command += ["--port", str(port), "--db", db_url]
    if not reconciler:
        command.append("--no-reconciler")
    proc = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    try:
        # A guard, not a measured time: on a loaded machine a start took over 60 s.
        deadline = time.monotonic() + 180
        while not _answers(base):
            assert proc.poll() is None, "the sandbox exited while starting"
            assert time.monotonic() < deadline, "the sandbox did not start within 180 s"
            time.sleep(0.2)
        yield base
    finally:
        proc.terminate()
        proc.wait(timeout=30)
