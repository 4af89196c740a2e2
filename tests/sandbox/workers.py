"""A ``workbench sandbox --workers 2`` process of a test module's own, and its worker processes.

The ``workers`` fixture (tests/sandbox/conftest.py) starts one per module and backend;
every request a test sends on a connection of its own may land on either worker.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx2

from tests.ports import free_port

__all__ = ["answers", "children", "two_workers"]


def children(pid: int) -> list[int]:
    """The ids of the processes whose parent is ``pid`` (read from /proc)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rpartition(")")[2].split()[1]) == pid:
                found.append(int(entry.name))
    return found


def answers(base: str) -> bool:
    """Whether a sandbox at ``base`` answers HTTP yet."""
    try:
        return httpx2.get(base + "/openapi.json", timeout=2).status_code == 200
    except httpx2.TransportError:
        return False


@contextmanager
def two_workers(url: str) -> Iterator[tuple[str, int]]:
    """(base URL, parent pid) of a two-worker sandbox on the database at ``url``."""
    port = free_port()
    env = {**os.environ, "WORKBENCH_API_KEY": "", "WORKBENCH_SECRET_KEY": ""}
    command = [sys.executable, "-m", "workbench", "sandbox", "--workers", "2"]
    command += ["--port", str(port), "--db", url]  # each worker runs a reconciler
    proc = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    try:
        # A guard, not a measured time: on a loaded machine the start took over 60 s.
        deadline = time.monotonic() + 180
        while len(children(proc.pid)) < 2 or not answers(base):
            assert proc.poll() is None, "the sandbox exited while starting"
            assert time.monotonic() < deadline, "two workers did not start within 180 s"
            time.sleep(0.2)
        yield base, proc.pid
    finally:
        proc.terminate()
        proc.wait(timeout=30)
