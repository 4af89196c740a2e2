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


def _ctrl_c(presses: list[float], *, after_summary: bool = False) -> tuple[str, int]:
    """Start the listener, press Ctrl-C after each delay once it is ready; its output.

    ``after_summary``: press once more as soon as the summary is printed.
    """
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
    if after_summary:
        while not seen[-1].startswith("Stopped:"):
            line = process.stdout.readline()
            assert line, "".join(seen)
            seen.append(line)
        process.send_signal(signal.SIGINT)  # a no-op if it has already ended
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


def test_a_second_ctrl_c_after_the_summary_does_not_print_aborted() -> None:
    # Pressed twice, the second Ctrl-C may arrive once the stop is done, as the command
    # ends (a loaded machine delays it): it is ignored there too.
    out, code = _ctrl_c([0.2], after_summary=True)
    assert "Aborted!" not in out
    assert "Traceback" not in out
    assert "Stopped: no deliveries" in out
    assert code == 0


def test_the_signal_handler_takes_no_lock_the_interrupted_thread_may_hold() -> None:
    # A handler that set a threading.Event could land while the main thread, waiting on
    # that event, held its lock, and wait for it forever: the listener hung after Ctrl-C.
    code = (
        "import signal, threading\n"
        "from workbench.cli.listen import _Stop, _stop_on_signals\n"
        "stop, ready = _Stop(), threading.Event()\n"
        "with _stop_on_signals(stop, ready):\n"
        "    ready.set()\n"
        "    with ready._cond:  # as inside ready.wait()\n"
        "        signal.raise_signal(signal.SIGINT)\n"
        "    print(stop.requested)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=WAIT
    )
    assert done.stdout.strip() == "True", done.stdout + done.stderr
