"""A cancel or pause acknowledged while a renewal runs: no renewal charge is captured after it.

A real race over HTTP: ``workbench sandbox --workers 2`` (no background reconciler, so
the only renewal pass is the clock advance the test sends) on an SQLite file and on
PostgreSQL. Many daily subscriptions fall due in one clock advance; while it claims,
charges and finishes them, every subscription is cancelled or paused from several
connections, spread over the renewal window. Whatever the interleaving, no
``payment.captured`` for a subscription may be recorded after its acknowledged
cancel or pause, and its charges read after the acknowledgement never grow.
"""

from __future__ import annotations

import os
import random
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx2
import pytest

from tests.ports import free_port
from tests.postgres import database_url
from tests.sandbox.clients import signed_client
from tests.sandbox.subscriptions.api import sub_body

#: Subscriptions per run: enough that cancels land in every step of the renewal.
SUBSCRIPTIONS = 200
#: Between two stop requests' start times; the stops span SUBSCRIPTIONS * PACE seconds.
PACE = 0.005
STOPPED = {"cancel": "subscription.cancelled", "pause": "subscription.paused"}


def _answers(base: str) -> bool:
    try:
        return httpx2.get(base + "/openapi.json", timeout=2).status_code == 200
    except httpx2.TransportError:
        return False


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def two_workers(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    """The base URL of a two-worker sandbox on its own database, reconciler off."""
    with database_url(request.param, tmp_path_factory.mktemp("renewal-race")) as url:
        port = free_port()
        env = {**os.environ, "WORKBENCH_API_KEY": "", "WORKBENCH_SECRET_KEY": ""}
        command = [sys.executable, "-m", "workbench", "sandbox", "--workers", "2"]
        command += ["--no-reconciler", "--port", str(port), "--db", url]
        proc = subprocess.Popen(
            command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        base = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + 60
            while not _answers(base):
                assert proc.poll() is None, "the sandbox exited while starting"
                assert time.monotonic() < deadline, "the sandbox did not start within 60 s"
                time.sleep(0.2)
            yield base
        finally:
            proc.terminate()
            proc.wait(timeout=30)


def _captured(client: httpx2.Client, sub_id: str) -> int:
    response = client.get(f"/v1/subscriptions/{sub_id}/charges")
    assert response.status_code == 200, response.text
    return sum(1 for item in response.json()["items"] if item["status"] == "captured")


def test_no_renewal_charge_is_captured_after_an_acknowledged_cancel_or_pause(
    two_workers: str,
) -> None:
    base = two_workers
    local = threading.local()
    clients: list[httpx2.Client] = []

    def client() -> httpx2.Client:
        # One keep-alive connection per thread; the kernel spreads them over the workers.
        if not hasattr(local, "client"):
            local.client = signed_client(base)
            clients.append(local.client)
        c: httpx2.Client = local.client
        return c

    try:
        with signed_client(base) as setup:
            assert setup.post("/sandbox/reset", json={}).status_code == 200
            # 0 switches limiting off (null would restore the default, 200 a second): the
            # race sends about 600 requests as fast as the machine allows.
            assert setup.post("/sandbox/rate-limit", json={"perSecond": 0}).status_code == 200

        def create(_: int) -> str:
            response = client().post("/v1/subscriptions", json=sub_body(intervalUnit="day"))
            assert response.status_code == 201, response.text
            return str(response.json()["id"])

        with ThreadPoolExecutor(max_workers=8) as pool:
            ids = list(pool.map(create, range(SUBSCRIPTIONS)))
        rng = random.Random(19)
        actions = {sub_id: rng.choice(("cancel", "cancel", "pause")) for sub_id in ids}
        order = list(ids)
        rng.shuffle(order)

        advanced: list[httpx2.Response] = []

        def advance() -> None:
            # Every subscription falls due in this one request's renewal pass.
            with signed_client(base) as c:
                body = {"seconds": 2 * 86_400}
                advanced.append(c.post("/sandbox/clock/advance", json=body, timeout=120))

        runner = threading.Thread(target=advance)
        runner.start()
        start = time.monotonic()

        def stop(item: tuple[int, str]) -> tuple[str, int]:
            index, sub_id = item
            time.sleep(max(0.0, start + index * PACE - time.monotonic()))
            action = actions[sub_id]
            body = {"atPeriodEnd": False} if action == "cancel" else {}
            response = client().post(f"/v1/subscriptions/{sub_id}/{action}", json=body)
            assert response.status_code == 200, (action, response.text)
            assert response.json()["status"] == ("cancelled" if action == "cancel" else "paused")
            return sub_id, _captured(client(), sub_id)

        with ThreadPoolExecutor(max_workers=8) as pool:
            seen_after_ack = dict(pool.map(stop, enumerate(order)))
        runner.join(timeout=120)
        assert not runner.is_alive(), "the clock advance did not answer within 120 s"
        assert [r.status_code for r in advanced] == [200], [r.text for r in advanced]

        with signed_client(base) as check:
            assert check.post("/sandbox/reconciler/tick", json={}).status_code == 200
            events = check.get("/sandbox/events").json()["items"]
            at_end = {sub_id: _captured(check, sub_id) for sub_id in ids}
    finally:
        for c in clients:
            c.close()

    history: dict[str, list[str]] = {sub_id: [] for sub_id in ids}
    for event in events:
        data: dict[str, Any] = event["data"]
        if data.get("subscriptionId") in history:
            history[data["subscriptionId"]].append(event["type"])
    after_stop = {}
    for sub_id, types in history.items():
        stopped_at = types.index(STOPPED[actions[sub_id]])
        after_stop[sub_id] = types[stopped_at:].count("payment.captured")
    grew = {s: (seen_after_ack[s], at_end[s]) for s in ids if at_end[s] > seen_after_ack[s]}
    charged_before = sum(1 for types in history.values() if "payment.captured" in types)
    print(
        f"{SUBSCRIPTIONS} subscriptions: {charged_before} renewed before their stop, "
        f"{sum(after_stop.values())} captured after an acknowledged stop"
    )
    assert {s: n for s, n in after_stop.items() if n} == {}, [
        history[s] for s, n in after_stop.items() if n
    ][:3]
    assert grew == {}
