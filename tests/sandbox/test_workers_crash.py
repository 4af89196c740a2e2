"""``workbench sandbox --workers 2`` killed: no orphan keeps the port, nothing acknowledged is lost.

After ``kill -9`` of the master, its workers shut themselves down, and a sandbox
started again on the same port and database comes up and finds its data. After
``kill -9`` of every process under load, every acknowledged charge is there exactly once.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest

from tests.ports import free_port
from tests.postgres import database_url
from tests.sandbox.bodies import charge_body
from tests.sandbox.clients import signed_client
from tests.sandbox.workers import answers as _answers
from tests.sandbox.workers import children as _children


def _alive(pid: int) -> bool:
    """Running, and not a zombie waiting for a parent that does not reap it."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rpartition(")")[2].split()[0] != "Z"


def _start(port: int, url: str) -> subprocess.Popen[bytes]:
    env = {**os.environ, "WORKBENCH_API_KEY": "", "WORKBENCH_SECRET_KEY": ""}
    command = [sys.executable, "-m", "workbench", "sandbox", "--workers", "2"]
    command += ["--port", str(port), "--db", url]
    return subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def _stop_all(proc: subprocess.Popen[bytes]) -> None:
    children = _children(proc.pid)
    proc.kill()
    proc.wait(timeout=30)
    for pid in children:
        if _alive(pid):
            os.kill(pid, signal.SIGKILL)


def _wait_serving(proc: subprocess.Popen[bytes], base: str) -> list[int]:
    # Generous: on a loaded machine importing the sandbox alone has taken over a minute.
    deadline = time.monotonic() + 180
    while len(_children(proc.pid)) < 2 or not _answers(base):
        assert proc.poll() is None, "the sandbox exited while starting"
        assert time.monotonic() < deadline, "two workers did not start within 180 s"
        time.sleep(0.2)
    return _children(proc.pid)


@pytest.fixture(params=["sqlite", "postgres"])
def db(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    if not Path("/proc").is_dir():
        pytest.skip("following worker processes reads /proc (Linux only)")
    with database_url(request.param, tmp_path) as url:
        yield url


def test_workers_exit_when_their_master_is_killed_and_a_restart_finds_the_data(
    db: str,
) -> None:
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    first = _start(port, db)
    try:
        workers = _wait_serving(first, base)
        with signed_client(base) as client:
            paid = client.post("/v1/payments/card", json=charge_body())
        assert paid.status_code == 201, paid.text
    except BaseException:
        _stop_all(first)  # a start or charge that failed leaves no sandbox running
        raise
    os.kill(first.pid, signal.SIGKILL)
    first.wait(timeout=30)
    deadline = time.monotonic() + 60
    while any(_alive(pid) for pid in workers):
        if time.monotonic() > deadline:
            for pid in workers:  # leave nothing behind, then fail
                if _alive(pid):
                    os.kill(pid, signal.SIGKILL)
            pytest.fail("the workers kept running after their master was killed")
        time.sleep(0.2)
    second = _start(port, db)
    try:
        _wait_serving(second, base)
        with signed_client(base) as client:
            again = client.get(f"/v1/payments/{paid.json()['paymentId']}")
    except BaseException:
        _stop_all(second)
        raise
    second.terminate()
    second.wait(timeout=30)
    assert again.status_code == 200, again.text
    assert again.json()["amount"] == paid.json()["amount"]


def test_kill_9_under_load_keeps_each_acknowledged_charge_once_and_replays_it_unchanged(
    db: str,
) -> None:
    """The reliability probe's check: charges in flight from four connections, then
    ``kill -9`` of the master and both workers at once, then a restart on the same
    database. Every charge answered 201 is there, once; the same Idempotency-Key answers
    the same bytes; the same transactionId under a new key finds the same payment."""
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    sent: list[tuple[str, dict[str, object]]] = []
    acknowledged: dict[str, bytes] = {}
    stop = threading.Event()

    def send() -> None:
        with signed_client(base) as client:
            while not stop.is_set():
                key, body = str(uuid.uuid4()), charge_body(threeDSecure=False)
                sent.append((key, body))
                try:
                    answer = client.post(
                        "/v1/payments/card", json=body, headers={"Idempotency-Key": key}
                    )
                except httpx2.TransportError:
                    return  # the sandbox was killed under this request
                assert answer.status_code == 201, answer.text
                acknowledged[key] = answer.content

    first = _start(port, db)
    try:
        processes = [first.pid, *_wait_serving(first, base)]
        with signed_client(base) as client:
            limit = client.post("/sandbox/rate-limit", json={"perSecond": 0})
            assert limit.status_code == 200, limit.text
        senders = [threading.Thread(target=send) for _ in range(4)]
        for thread in senders:
            thread.start()
        deadline = time.monotonic() + 60
        while len(acknowledged) < 100 and time.monotonic() < deadline:
            time.sleep(0.02)
        for pid in processes:
            os.kill(pid, signal.SIGKILL)
        first.wait(timeout=30)
    except BaseException:
        _stop_all(first)
        raise
    finally:
        stop.set()
    for thread in senders:
        thread.join(timeout=60)
    assert len(acknowledged) >= 100, "fewer than 100 charges answered within 60 s"
    second = _start(port, db)
    try:
        _wait_serving(second, base)
        with signed_client(base) as client:
            replays = {
                key: client.post("/v1/payments/card", json=body, headers={"Idempotency-Key": key})
                for key, body in sent
            }
            fenced = {
                key: client.post(
                    "/v1/payments/card", json=body, headers={"Idempotency-Key": str(uuid.uuid4())}
                )
                for key, body in sent
                if key in acknowledged
            }
    finally:
        _stop_all(second)
    print(
        f"{len(acknowledged)} charges acknowledged before the kill, "
        f"{len(sent) - len(acknowledged)} sent and cut off"
    )
    changed = [
        key for key, first_answer in acknowledged.items() if replays[key].content != first_answer
    ]
    assert changed == []
    for key, answer in fenced.items():
        assert answer.status_code == 200, answer.text  # the fence's answer: that payment
        assert answer.json()["paymentId"] == json.loads(acknowledged[key])["paymentId"]
    # Requests cut off by the kill were either kept (replayed) or never happened (made now).
    assert {r.status_code for r in replays.values()} == {201}
