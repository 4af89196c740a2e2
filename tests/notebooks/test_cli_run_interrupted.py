"""Ctrl-C during ``workbench run``: one line, the summary of the flows finished, exit 130,
and ``_executed/`` holding this run's copies only.

The command runs as a process of its own and gets SIGINT as from a terminal's Ctrl-C
(the kernels run in sessions of their own, so the terminal's signal reaches only it),
while the second notebook's cell is running.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_notebook

from workbench.cli.run import INTERRUPTED_EXIT_STATUS

#: A guard against a hang, never asserted as a duration.
WAIT = 120.0


def _write(path: Path, source: str) -> None:
    book = new_notebook(cells=[new_code_cell(source)])
    book.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    nbformat.write(book, path)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_ctrl_c_prints_one_line_and_the_finished_flows_and_exits_130(tmp_path: Path) -> None:
    folder = tmp_path / "notebooks"
    folder.mkdir()
    started = tmp_path / "kernel.pid"
    _write(folder / "01-first.ipynb", "print('fresh')")
    _write(
        folder / "02-long.ipynb",
        f"import os, time\nopen({str(started)!r}, 'w').write(str(os.getpid()))\n"
        "for _ in range(3000):\n    time.sleep(0.1)",
    )
    _write(folder / "03-last.ipynb", "print('never')")
    stale = folder / "_executed"
    stale.mkdir()
    for name in ("01-first.ipynb", "03-last.ipynb"):  # copies of an earlier run
        _write(stale / name, "print('stale')")

    process = subprocess.Popen(
        [sys.executable, "-m", "workbench", "run", "--notebooks", str(folder)],
        cwd=tmp_path,
        env={k: v for k, v in os.environ.items() if not k.startswith("WORKBENCH_")},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        # As from a terminal: SIGINT not ignored even where this test runs as a background job.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    deadline = time.monotonic() + WAIT
    while not (started.exists() and started.read_text()):
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline, "the second notebook's cell never started"
        time.sleep(0.1)
    kernel = int(started.read_text())
    process.send_signal(signal.SIGINT)
    stdout, stderr = process.communicate(timeout=WAIT)

    assert process.returncode == INTERRUPTED_EXIT_STATUS == 130, stdout + stderr
    assert stderr.splitlines() == [
        "Interrupted (Ctrl-C): 1 of 3 flows finished, 2 did not (02-long and 1 after it)"
    ]
    assert "Traceback" not in stdout
    table = stdout[stdout.index("flow ") :].splitlines()
    assert table[1].split() == ["01-first", "passed", table[1].split()[2]]
    assert table[2] == "1 of 1 flows passed in " + table[1].split()[2] + " s"
    assert table[3] == f"Executed notebooks: {stale.resolve()}"

    # This run's copy only: none of the earlier run's, none of the notebook cut short.
    assert sorted(p.name for p in stale.iterdir()) == ["01-first.ipynb"]
    fresh = nbformat.read(stale / "01-first.ipynb", as_version=4)
    assert fresh.cells[0].outputs[0]["text"] == "fresh\n"
    assert sorted(p.name for p in folder.iterdir()) == [
        "01-first.ipynb",
        "02-long.ipynb",
        "03-last.ipynb",
        "_executed",
    ]
    deadline = time.monotonic() + WAIT
    while _alive(kernel):  # the kernel was ended, not left running
        assert time.monotonic() < deadline, f"kernel {kernel} still runs"
        time.sleep(0.1)
