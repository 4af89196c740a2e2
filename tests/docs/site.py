"""The guide's strict build, made once per test run and read by every test of a built page.

`start` launches ``mkdocs build --strict`` (exactly as ``make docs`` runs it) in the
background into the run's shared folder (`tests.shared.run_folder`), unless a process
of the run already did; `result` waits for it and answers what it printed and how it
ended. The docs conftest starts it as soon as a process has collected a test that
needs it, so the build runs beside the other tests instead of in front of its own, and
the tests of built pages can run on any worker.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from tests.paths import ROOT
from tests.shared import exclusive, run_folder

#: Longest the build may take (its subprocess is killed after that).
TIMEOUT = 300.0
#: The build's own process, when this process started it (its waiter writes the status).
_started: list[tuple[subprocess.Popen[bytes], threading.Thread]] = []


def folder(factory: pytest.TempPathFactory) -> Path:
    """The run's folder of the build (every worker's same one)."""
    return run_folder(factory, "guide")


def command(site: Path) -> list[str]:
    """``mkdocs build --strict`` into ``site``, as ``make docs`` runs it."""
    return [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)]


def start(folder: Path) -> None:
    """Start the build into ``folder/site`` unless a process of this run has started it."""
    with exclusive(folder):
        if (folder / "started").exists():
            return
        (folder / "started").touch()
        env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
        with (folder / "stdout").open("wb") as out, (folder / "stderr").open("wb") as err:
            process = subprocess.Popen(
                command(folder / "site"), cwd=ROOT, env=env, stdout=out, stderr=err
            )
    waiter = threading.Thread(target=_record_status, args=(process, folder), daemon=True)
    waiter.start()
    _started.append((process, waiter))


def _record_status(process: subprocess.Popen[bytes], folder: Path) -> None:
    """Wait for the build (killing it after `TIMEOUT`), then write its exit status."""
    try:
        status = process.wait(timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        process.kill()
        status = process.wait()
    partial = folder / "status.partial"
    partial.write_text(str(status), "utf-8")
    partial.replace(folder / "status")  # whole or absent, never half-written


def result(folder: Path) -> subprocess.CompletedProcess[str]:
    """The build's outcome, waiting for it (starting it first if no process has)."""
    start(folder)
    status = folder / "status"
    deadline = time.monotonic() + TIMEOUT + 30
    while not status.exists():
        assert time.monotonic() < deadline, "the guide's build never finished"
        time.sleep(0.1)
    return subprocess.CompletedProcess(
        command(folder / "site"),
        int(status.read_text("utf-8")),
        (folder / "stdout").read_text("utf-8", "replace"),
        (folder / "stderr").read_text("utf-8", "replace"),
    )


def finish() -> None:
    """Wait for a build this process started: another worker may still be reading it."""
    while _started:
        _process, waiter = _started.pop()
        waiter.join()


#: Where the built pages ask for the guide's copy of mermaid (mkdocs.yml, extra_javascript).
MERMAID = "**/assets/javascripts/mermaid.min.js"


def draws_diagrams(site: Path, path: str) -> bool:
    """Whether the built page ``path`` (``""`` for Home, else ``"section/page/"``) has a
    Mermaid diagram: only such a page runs the 3.5 MB of mermaid it loads on every page."""
    return 'class="mermaid"' in (site / path / "index.html").read_text("utf-8")
