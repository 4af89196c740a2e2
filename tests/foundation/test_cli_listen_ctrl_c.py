"""Ctrl-C stops ``workbench listen`` cleanly: its summary, never "Aborted!" or a traceback."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from tests.ports import free_port

#: A guard against a hang, never asserted as a duration.
WAIT = 60.0


def _ctrl_c(presses: list[float]) -> tuple[str, int]:
    """Start the listener, press Ctrl-C after each delay once it is ready; its output."""
    env = {**os.environ, "WORKBENCH_BASE_URL": f"http://127.0.0.1:{free_port()}"}
    process = subprocess.Popen(
        [sys.executable, "-m", "workbench", "listen", "--port", "0", "--secret", "whsec_t"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=env,
        # A terminal's Ctrl-C is SIGINT with its default handling, whatever this runner set.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    assert process.stdout is not None
    seen = []
    while not seen or "Ready" not in seen[-1]:
        line = process.stdout.readline()
        assert line, "".join(seen)
        seen.append(line)
    for delay in presses:
        time.sleep(delay)
        process.send_signal(signal.SIGINT)
    out, _ = process.communicate(timeout=WAIT)
    return "".join(seen) + out, process.returncode


def test_ctrl_c_prints_the_summary_and_exits_0() -> None:
    out, code = _ctrl_c([0.2])
    assert out.rstrip().endswith("Stopped: no deliveries"), out
    assert code == 0


@pytest.mark.parametrize("gap", [0.0, 0.001])
def test_a_second_ctrl_c_at_once_does_not_abort_the_stop(gap: float) -> None:
    out, _ = _ctrl_c([0.2, gap])
    assert "Aborted!" not in out
    assert "Traceback" not in out
    assert "Stopped: no deliveries" in out
