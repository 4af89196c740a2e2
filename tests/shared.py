"""What a test run makes once for all its processes: a folder they share and a lock on it.

Under pytest-xdist each worker is a pytest process of its own, with session fixtures of
its own: a session fixture that builds something (the wheel, the guide) builds it once
per worker. The folder below is the same for every worker of one run and different for
any other run (two suites at once from one checkout each get their own), so what is made
there under `exclusive` is made once per run and read by the others.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Iterator
from pathlib import Path

import pytest


def run_folder(factory: pytest.TempPathFactory, name: str) -> Path:
    """``name`` in the folder shared by every process of this run (created if missing).

    An xdist worker's base temporary folder is ``<run's>/<worker id>``, so the run's is
    its parent; without xdist the process's own base temporary folder is the run's.
    """
    base = factory.getbasetemp()
    shared = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    folder = shared / name
    folder.mkdir(exist_ok=True)
    return folder


@contextlib.contextmanager
def exclusive(folder: Path, name: str = "lock") -> Iterator[None]:
    """Hold ``folder``'s lock ``name`` (one process of the run at a time).

    An ``flock`` is released by the kernel when its holder dies, so a worker that crashes
    while holding it never blocks the others.
    """
    with (folder / f".{name}").open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
