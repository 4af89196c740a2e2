"""The pytest plugin in real runs of a user's suite: pytest in processes of its own.

Two runs with two xdist workers each, at the same time, against one sandbox already
running (``--workbench-url``): every test gets a merchant of its own, so none of them
sees another's charges or clock, and both runs pass. Without the option, the workers of
one run share the one sandbox the first of them started.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from workbench.testing import running_sandbox

#: A user's suite: each test would fail on a merchant another test (or run) also used.
USER_SUITE = """
import pytest

@pytest.mark.parametrize("n", range(4))
def test_a_fixed_transaction_id_is_new_to_the_merchant(workbench_client, n):
    charge = workbench_client.payments.charge_card(
        transaction_id="the-same-in-every-test", amount=1_000 + n, card_token="tok_test_success"
    )
    assert charge.amount == 1_000 + n
    assert not (charge.response and charge.response.replayed)
    assert [e.type for e in workbench_client.sandbox.events().items] == ["payment.captured"]

@pytest.mark.parametrize("n", range(2))
def test_the_clock_is_the_merchants_own(workbench_client, workbench_clock, n):
    start = workbench_clock.advance(seconds=0)
    reached = workbench_clock.advance(days=31)
    assert 31 * 86_400 <= (reached - start).total_seconds() < 31 * 86_400 + 60

def test_the_sandbox_is_the_runs_own(workbench_sandbox, tmp_path_factory, worker_id):
    out = tmp_path_factory.getbasetemp().parent / f"sandbox-{worker_id}.txt"
    out.write_text(workbench_sandbox.base_url)
"""


def _run(folder: Path, *args: str) -> subprocess.Popen[str]:
    folder.mkdir()
    (folder / "pytest.ini").write_text("[pytest]\n", "utf-8")  # not this repository's options
    (folder / "test_user_suite.py").write_text(USER_SUITE, "utf-8")
    # Only the two plugins the run is about, each named by its entry point: the others
    # installed here (nbval, schemathesis, hypothesis...) cost each of the run's three
    # processes about 4 s of CPU to import, and no test of the user's suite needs them.
    command = [sys.executable, "-m", "pytest", "-p", "xdist", "-p", "workbench"]
    command += ["-n", "2", "-q", "--basetemp", str(folder / "tmp"), *args]
    env = {k: v for k, v in os.environ.items() if not k.startswith("WORKBENCH_")}
    env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    return subprocess.Popen(
        command, cwd=folder, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )


def test_two_runs_of_two_workers_share_one_running_sandbox(tmp_path: Path) -> None:
    with running_sandbox(db_dir=tmp_path, run_reconciler_in_background=False) as server:
        url = ["--workbench-url", server.base_url]
        runs = [_run(tmp_path / f"run{n}", *url) for n in (1, 2)]
        outputs = [run.communicate(timeout=600)[0] for run in runs]
        for run, output in zip(runs, outputs, strict=True):
            assert run.returncode == 0, output
            assert "7 passed" in output, output
        for n in (1, 2):
            shown = {p.read_text() for p in (tmp_path / f"run{n}" / "tmp").glob("sandbox-*.txt")}
            assert shown == {server.base_url}


def test_the_workers_of_one_run_share_the_sandbox_the_first_started(tmp_path: Path) -> None:
    run = _run(tmp_path / "run", "--dist", "each")  # every test on both workers
    output = run.communicate(timeout=600)[0]
    assert run.returncode == 0, output
    shown = [p.read_text() for p in (tmp_path / "run" / "tmp").glob("sandbox-*.txt")]
    assert len(shown) == 2, shown  # one file per worker
    assert len(set(shown)) == 1, shown  # naming one sandbox
