"""``workbench sandbox --workers 2`` comes up on a busy machine, no worker killed as hung.

uvicorn pings each worker and kills one that does not answer within its health-check
timeout, one still starting included. Here every core is kept busy while the workers
start, and each worker's start is held back longer than uvicorn's default timeout (5 s)
before it can answer (a ``sitecustomize`` in the spawned processes): both workers must
come up without a restart.
"""

from __future__ import annotations

import multiprocessing
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

from tests.paths import ROOT
from tests.ports import free_port

#: Seconds a spawned worker waits before it starts: more than uvicorn's default timeout.
SLOW_START = 6
SLOW = f"""
import sys
import time

if "--multiprocessing-fork" in sys.argv:  # a worker uvicorn spawned, not the command
    time.sleep({SLOW_START})
"""


def _spin(stop: float) -> None:
    while time.monotonic() < stop:
        pass


@contextmanager
def _cpu_load(seconds: float) -> Iterator[None]:
    """Every core busy for up to ``seconds`` (or until the block ends)."""
    stop = time.monotonic() + seconds
    context = multiprocessing.get_context("spawn")
    spinners = [context.Process(target=_spin, args=(stop,)) for _ in range(os.cpu_count() or 2)]
    for spinner in spinners:
        spinner.start()
    try:
        yield
    finally:
        for spinner in spinners:
            spinner.terminate()
            spinner.join()


def _answers(base: str) -> bool:
    try:
        return httpx.get(base + "/openapi.json", timeout=2).status_code == 200
    except httpx.TransportError:
        return False


def test_two_workers_start_under_load_without_a_restart(tmp_path: Path) -> None:
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(SLOW, "utf-8")
    port = free_port()
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(site), str(ROOT)]),
        "WORKBENCH_API_KEY": "",
        "WORKBENCH_SECRET_KEY": "",
        "NO_COLOR": "1",
    }
    command = [sys.executable, "-m", "workbench", "sandbox", "--workers", "2", "--port", str(port)]
    command += ["--db", f"sqlite:///{tmp_path / 'sandbox.db'}", "--no-reconciler"]
    log = tmp_path / "sandbox.log"
    base = f"http://127.0.0.1:{port}"
    with log.open("wb") as out:
        proc = subprocess.Popen(command, env=env, stdout=out, stderr=out)
    try:
        with _cpu_load(SLOW_START + 2):
            _wait_for_two_workers(base, proc, log)
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    text = log.read_text("utf-8", "replace")
    assert text.count("Started server process") == 2, text
    assert "died" not in text, text


def _wait_for_two_workers(base: str, proc: subprocess.Popen[bytes], log: Path) -> None:
    """Until both workers finished starting and the port answers; fails at a restart."""
    deadline = time.monotonic() + 120  # a guard, not a measured time
    while True:
        text = log.read_text("utf-8", "replace")
        assert "died" not in text, text
        assert "not ready" not in text, text
        assert proc.poll() is None, text
        if text.count("Application startup complete") == 2 and _answers(base):
            return
        assert time.monotonic() < deadline, text
        time.sleep(0.2)
