"""``workbench sandbox --workers 2`` killed: no orphan keeps the port, nothing acknowledged is lost.

After ``kill -9`` of every process under load, every acknowledged charge is there exactly
once. After ``kill -9`` of the master alone, its workers shut themselves down, and a
sandbox started again on the same port and database comes up and finds its data.
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
from concurrent.futures import ThreadPoolExecutor
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


def _start(port: int, url: str, workers: int = 2) -> subprocess.Popen[bytes]:
    env = {**os.environ, "WORKBENCH_API_KEY": "", "WORKBENCH_SECRET_KEY": ""}
    command = [sys.executable, "-m", "workbench", "sandbox"]
    command += ["--workers", str(workers)] if workers > 1 else []
    command += ["--port", str(port), "--db", url]
    return subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def _stop_all(proc: subprocess.Popen[bytes]) -> None:
    children = _children(proc.pid)
    proc.kill()
    proc.wait(timeout=30)
    for pid in children:
        if _alive(pid):
            os.kill(pid, signal.SIGKILL)


def _wait_serving(proc: subprocess.Popen[bytes], base: str, workers: int = 2) -> list[int]:
    # Generous: on a loaded machine importing the sandbox alone has taken over a minute.
    deadline = time.monotonic() + 180
    while len(_children(proc.pid)) < (workers if workers > 1 else 0) or not _answers(base):
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


def _charges(base: str, requests: list[tuple[str, dict[str, object]]]) -> list[httpx2.Response]:
    """The answers to these (Idempotency-Key, body) charges, sent from 8 connections."""
    local = threading.local()
    clients: list[httpx2.Client] = []

    def post(request: tuple[str, dict[str, object]]) -> httpx2.Response:
        if not hasattr(local, "client"):
            local.client = signed_client(base)
            clients.append(local.client)
        key, body = request
        answer: httpx2.Response = local.client.post(
            "/v1/payments/card", json=body, headers={"Idempotency-Key": key}
        )
        return answer

    try:
        with ThreadPoolExecutor(max_workers=8) as pool:
            return list(pool.map(post, requests))
    finally:
        for client in clients:
            client.close()


def _kill_the_master_alone(proc: subprocess.Popen[bytes]) -> None:
    """``kill -9`` of the master only: its workers must notice and exit by themselves."""
    workers = _children(proc.pid)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
    deadline = time.monotonic() + 60
    while any(_alive(pid) for pid in workers):
        if time.monotonic() > deadline:
            for pid in workers:  # leave nothing behind, then fail
                if _alive(pid):
                    os.kill(pid, signal.SIGKILL)
            pytest.fail("the workers kept running after their master was killed")
        time.sleep(0.2)


def test_kill_9_under_load_keeps_each_acknowledged_charge_once_and_no_orphan_keeps_the_port(
    db: str,
) -> None:
    """The reliability probe's check: charges in flight from four connections, then
    ``kill -9`` of the master and both workers at once, then a restart on the same
    database. Every charge answered 201 is there, once; the same Idempotency-Key answers
    the same bytes; the same transactionId under a new key finds the same payment.

    Then ``kill -9`` of the restarted master alone: its workers exit by themselves, and a
    third start on the same port and database comes up and finds the data (an orphaned
    worker would keep the port: "address already in use"). Three starts in one test:
    each start of two workers is the expensive part, so the third, which only has to
    bind the port and read the database, is a one-process sandbox."""
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
            limit = client.post("/sandbox/rate-limit", json={"perSecond": 0})
            assert limit.status_code == 200, limit.text
        # Every replay, then every fenced retry, from several connections at once.
        replays = dict(zip([key for key, _ in sent], _charges(base, sent), strict=True))
        kept = [(key, body) for key, body in sent if key in acknowledged]
        retried = _charges(base, [(str(uuid.uuid4()), body) for _, body in kept])
        fenced = dict(zip([key for key, _ in kept], retried, strict=True))
    except BaseException:
        _stop_all(second)
        raise
    _kill_the_master_alone(second)
    third = _start(port, db, workers=1)
    try:
        _wait_serving(third, base, workers=1)
        charged = json.loads(next(iter(acknowledged.values())))
        with signed_client(base) as client:
            found = client.get(f"/v1/payments/{charged['paymentId']}")
    finally:
        _stop_all(third)
    assert found.status_code == 200, found.text
    assert found.json()["amount"] == charged["amount"]
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
