"""``workbench sandbox`` and its port: the port bound is the one shown and linked, and a
port already taken is one line, printed before anything else, with exit status 4.

The command runs as a process of its own, listening on 127.0.0.1 as a developer starts it.
"""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.paths import ROOT
from tests.ports import free_port
from workbench import Client
from workbench.cli.sandbox import PORT_TAKEN_EXIT_STATUS
from workbench.config import DEFAULT_API_KEY, DEFAULT_SECRET_KEY

BANNER = re.compile(r"^Payments Workbench sandbox at http://127\.0\.0\.1:(\d+)/ ", re.MULTILINE)


def _command(port: int, tmp_path: Path) -> list[str]:
    return [
        sys.executable,
        "-m",
        "workbench",
        "sandbox",
        "--port",
        str(port),
        "--db",
        f"sqlite:///{tmp_path / 'sandbox.db'}",
        "--no-reconciler",
        "--replay-key-file",
        str(tmp_path / "replay.key"),
    ]


def _environment() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("WORKBENCH_")}
    env["NO_COLOR"] = "1"
    return env


@pytest.fixture
def on_port_zero(tmp_path: Path) -> Iterator[tuple[int, str]]:
    """``workbench sandbox --port 0`` serving: the port its banner shows, and its log so far."""
    log = tmp_path / "sandbox.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(_command(0, tmp_path), env=_environment(), stdout=out, stderr=out)
    try:
        deadline = time.monotonic() + 120  # a guard, not a measured time
        while "Application startup complete" not in log.read_text("utf-8"):
            assert proc.poll() is None, log.read_text("utf-8")
            assert time.monotonic() < deadline, log.read_text("utf-8")
            time.sleep(0.1)
        text = log.read_text("utf-8")
        shown = BANNER.search(text)
        assert shown, text
        yield int(shown[1]), text
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=30)


def test_port_zero_shows_the_port_bound_and_every_link_carries_it(
    on_port_zero: tuple[int, str],
) -> None:
    port, text = on_port_zero
    assert port != 0
    assert ":0/" not in text, text
    base = f"http://127.0.0.1:{port}"
    assert f"{base}/docs" in text, text
    with Client(DEFAULT_API_KEY, DEFAULT_SECRET_KEY, base) as client:
        session = client.sessions.create(
            transaction_id=f"order-{port}", amount=15_000, return_url="https://shop.example/back"
        )
        charge = client.payments.charge_card(
            transaction_id=f"order-3ds-{port}", amount=15_000, card_token="tok_test_3ds_challenge"
        )
    assert session.checkout_url.startswith(f"{base}/checkout/"), session.checkout_url
    assert charge.acs_url is not None
    assert charge.acs_url.startswith(f"{base}/sandbox/acs/"), charge.acs_url


def test_a_taken_port_is_one_line_before_anything_else_and_exit_status_4(
    tmp_path: Path,
) -> None:
    port = free_port()
    with socket.create_server(("127.0.0.1", port)):  # another server listens there
        done = subprocess.run(
            _command(port, tmp_path),
            env=_environment(),
            capture_output=True,
            text=True,
            timeout=120,
        )
    assert done.returncode == PORT_TAKEN_EXIT_STATUS == 4, done.stdout + done.stderr
    assert done.stdout == "", "nothing is printed before the error"
    assert done.stderr.splitlines() == [
        f"Error: port {port} on 127.0.0.1 is in use: another sandbox probably runs there "
        f"(http://127.0.0.1:{port}/); stop it, or start this one with --port 0 (any free "
        "port) or another --port"
    ]
    assert not (tmp_path / "sandbox.db").exists(), "no database was opened"


def test_the_guide_lists_the_taken_port_status() -> None:
    table = (ROOT / "docs" / "reference" / "cli.md").read_text("utf-8")
    [row] = [
        line for line in table.splitlines() if line.startswith(f"| {PORT_TAKEN_EXIT_STATUS} |")
    ]
    assert "port is taken" in row


def test_the_banner_prints_a_dashboard_link_that_signs_in_once(
    on_port_zero: tuple[int, str],
) -> None:
    port, text = on_port_zero
    found = re.search(
        rf"^dashboard \(one-time sign-in link, demo merchant\): "
        rf"(http://127\.0\.0\.1:{port}/dashboard/sign-in/link\?token=\S+)$",
        text,
        re.MULTILINE,
    )
    assert found, text
    import httpx2

    with httpx2.Client(follow_redirects=False) as browser:
        first = browser.get(found[1])
        assert first.status_code == 303
        assert first.headers["location"] == "/dashboard"
        home = browser.get(f"http://127.0.0.1:{port}/dashboard")
        assert home.status_code == 200
        assert "mrc_demo0001" in home.text
    assert httpx2.get(found[1]).status_code == 404  # used once
