"""Merchants on ``workbench sandbox --workers 2``, on SQLite and PostgreSQL.

A merchant deleted through one worker: its keys are refused by both workers at once (the
key cache's shared stamp on SQLite; on PostgreSQL a kept key is confirmed against the
database). On every interface (``--host 0.0.0.0``): merchants are made only with the
admin token the command printed once.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest

from tests.ports import free_port
from tests.postgres import database_url
from tests.sandbox.bodies import charge_body
from tests.sandbox.clients import signed_client
from tests.sandbox.envelope import assert_envelope
from tests.sandbox.workers import answers

#: The module's requests never need background passes.
RECONCILER = False


def _fresh_charge(base: str, api_key: str, secret_key: str) -> httpx2.Response:
    """A charge on a connection of its own: it may land on either worker."""
    with signed_client(base, api_key, secret_key) as client:
        return client.post("/v1/payments/card", json=charge_body())


def test_a_deleted_merchants_keys_are_refused_by_every_worker(
    workers: tuple[str, str, int],
) -> None:
    base, _, _ = workers
    made = httpx2.post(f"{base}/sandbox/merchants", json={"name": "two workers"}).json()
    keys = made["apiKey"], made["secretKey"]
    # Each worker keeps the key once it has served it: enough connections reach both.
    served = [_fresh_charge(base, *keys).status_code for _ in range(12)]
    assert served == [201] * 12
    with signed_client(base, *keys) as own:
        gone = own.delete(f"/sandbox/merchants/{made['merchantId']}")
    assert gone.status_code == 200, gone.text
    answers = [_fresh_charge(base, *keys) for _ in range(12)]
    assert [(a.status_code, a.json()["code"]) for a in answers] == [(401, "SVC-GW-1003")] * 12


@pytest.fixture(params=["sqlite", "postgres"])
def team_host(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[str, str]]:
    """(base URL, printed output) of ``workbench sandbox --host 0.0.0.0 --workers 2``,
    reached at 127.0.0.1, once the admin token it made is printed."""
    with database_url(request.param, tmp_path) as url:
        port = free_port()
        log = tmp_path / "sandbox.log"
        env = {**os.environ, "NO_COLOR": "1", "WORKBENCH_API_KEY": "", "WORKBENCH_SECRET_KEY": ""}
        env.pop("WORKBENCH_SANDBOX_ADMIN_TOKEN", None)
        command = [sys.executable, "-m", "workbench", "sandbox", "--host", "0.0.0.0"]  # noqa: S104
        command += ["--port", str(port), "--db", url, "--workers", "2", "--no-reconciler"]
        command += ["--replay-key-file", str(tmp_path / "replay.key")]
        base = f"http://127.0.0.1:{port}"
        with log.open("wb") as out:
            proc = subprocess.Popen(command, env=env, stdout=out, stderr=out)
        try:
            deadline = time.monotonic() + 180  # a guard: a loaded machine starts slowly
            while not answers(base):
                assert proc.poll() is None, log.read_text("utf-8", "replace")
                assert time.monotonic() < deadline, "the sandbox did not start within 180 s"
                time.sleep(0.2)
            yield base, log.read_text("utf-8", "replace")
        finally:
            proc.terminate()
            proc.wait(timeout=30)


def test_a_sandbox_on_every_interface_makes_merchants_only_with_the_admin_token(
    team_host: tuple[str, str],
) -> None:
    base, printed = team_host
    shown = re.findall(r"admin token \(shown once\): (\S+)", printed)
    assert len(shown) == 1, printed  # printed once, by the command, not by each worker
    bearer = {"Authorization": f"Bearer {shown[0]}"}
    refused = httpx2.post(f"{base}/sandbox/merchants")
    assert_envelope(refused, 401, "SVC-GW-1006")
    # Each connection may land on either worker: both know the token.
    made = [httpx2.post(f"{base}/sandbox/merchants", headers=bearer) for _ in range(4)]
    assert [m.status_code for m in made] == [201] * 4
    wrong = httpx2.post(f"{base}/sandbox/merchants", headers={"Authorization": "Bearer nope"})
    assert_envelope(wrong, 401, "SVC-GW-1006")


def test_charges_in_flight_while_their_merchant_is_deleted_are_answered_or_refused(
    workers: tuple[str, str, int],
) -> None:
    """Charges racing their merchant's deletion: each is made (201) or refused as an
    unknown key (401 SVC-GW-1003); none is a 500, whichever worker serves it."""
    base, _, _ = workers
    made = httpx2.post(f"{base}/sandbox/merchants", json={"name": "deleted mid-flight"}).json()
    keys = made["apiKey"], made["secretKey"]
    assert _fresh_charge(base, *keys).status_code == 201  # both workers may keep the key
    answered: list[httpx2.Response] = []
    stop = threading.Event()

    def charge_until_stopped() -> None:
        with signed_client(base, *keys) as client:
            while not stop.is_set():
                answered.append(client.post("/v1/payments/card", json=charge_body()))

    threads = [threading.Thread(target=charge_until_stopped) for _ in range(6)]
    for thread in threads:
        thread.start()
    try:
        while len(answered) < 30:  # charges are in flight on both workers
            time.sleep(0.01)
        with signed_client(base, *keys) as own:
            gone = own.delete(f"/sandbox/merchants/{made['merchantId']}")
        assert gone.status_code == 200, gone.text
        refused = len(answered)
        while len(answered) < refused + 30:  # and go on arriving after the delete
            time.sleep(0.01)
    finally:
        stop.set()
        for thread in threads:
            thread.join(timeout=60)
    seen = {(a.status_code, a.json().get("code")) for a in answered}
    assert seen <= {(201, None), (401, "SVC-GW-1003")}, [
        a.text for a in answered if a.status_code not in (201, 401)
    ][:3]
    assert (401, "SVC-GW-1003") in seen
