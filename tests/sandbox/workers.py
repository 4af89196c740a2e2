"""A ``workbench sandbox --workers 2`` process of a test module's own, and its worker processes.

The ``workers`` fixture (tests/sandbox/conftest.py) starts one per module and backend;
every request a test sends on a connection of its own may land on either worker. The
tests that must hold across worker processes (the renewal race, the session fence,
fidelity) use it; the modules that set ``RECONCILER = False`` share one sandbox per
backend started without the reconciler, so the only passes are the clock advances and
ticks they send.
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

import httpx2

from tests.paths import ROOT
from tests.ports import free_port

__all__ = ["LOGS", "answers", "children", "two_workers"]


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
    """Whether a sandbox at ``base`` answers HTTP yet.

    Asks ``/healthz``: the OpenAPI document, asked for first, is built by the worker
    that answers, about 0.4 s of CPU that no test here needs."""
    try:
        return httpx2.get(base + "/healthz", timeout=2, verify=False).status_code == 200
    except httpx2.TransportError:
        return False


#: Seconds each spawned worker waits before it starts: more than uvicorn's default
#: health-check timeout (5 s), which killed workers still starting on a busy machine.
SLOW_START = 6
_SLOW_WORKERS = f"""
import sys
import time

if "--multiprocessing-fork" in sys.argv:  # a worker uvicorn spawned, not the command
    time.sleep({SLOW_START})
"""
#: base URL -> the log of the sandbox `two_workers` started there.
LOGS: dict[str, Path] = {}


def _spin(stop: float) -> None:
    while time.monotonic() < stop:
        pass


@contextmanager
def two_workers(
    url: str, folder: Path, *, under_load: bool = False, reconciler: bool = True
) -> Iterator[tuple[str, int]]:
    """(base URL, parent pid) of a two-worker sandbox on the database at ``url``.

    Each worker runs a reconciler unless ``reconciler`` is ``False``.

    With ``under_load`` it starts the way a busy machine starts it: every core kept busy
    by spinning processes, and each worker held back longer than uvicorn's default
    health-check timeout before it can answer (a ``sitecustomize`` in ``folder``). A
    worker uvicorn killed as hung meanwhile fails the start at once. The log is in `LOGS`.
    """
    port = free_port()
    site = folder / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(_SLOW_WORKERS if under_load else "", "utf-8")
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(site), str(ROOT)]),
        "WORKBENCH_API_KEY": "",
        "WORKBENCH_SECRET_KEY": "",
        "NO_COLOR": "1",
    }
    command = [sys.executable, "-m", "workbench", "sandbox", "--workers", "2"]
    command += ["--port", str(port), "--db", url]
    if not reconciler:
        command.append("--no-reconciler")
    base = f"http://127.0.0.1:{port}"
    log = LOGS[base] = folder / "sandbox.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(command, env=env, stdout=out, stderr=out)
    stop = time.monotonic() + (SLOW_START + 2 if under_load else 0)
    context = multiprocessing.get_context("spawn")
    busy = (os.cpu_count() or 2) if under_load else 0
    spinners = [context.Process(target=_spin, args=(stop,)) for _ in range(busy)]
    for spinner in spinners:
        spinner.start()
    try:
        try:
            # A guard, not a measured time: on a loaded machine the start took over 60 s.
            deadline = time.monotonic() + 180
            while True:
                text = log.read_text("utf-8", "replace")
                assert "died" not in text, text  # uvicorn killed a worker as hung
                assert "not ready" not in text, text
                assert proc.poll() is None, text
                started = text.count("Application startup complete") >= 2  # both workers
                if started and len(children(proc.pid)) >= 2 and answers(base):
                    break
                assert time.monotonic() < deadline, "two workers did not start within 180 s"
                time.sleep(0.2)
        finally:
            for spinner in spinners:
                spinner.terminate()
                spinner.join()
        yield base, proc.pid
    finally:
        proc.terminate()
        proc.wait(timeout=30)
