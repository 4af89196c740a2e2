"""A cancel or pause acknowledged while a renewal runs: serialised with it, never torn.

A real race over HTTP: ``workbench sandbox --workers 2`` (no background reconciler, so
the only renewal pass is the clock advance the test sends) on an SQLite file and on
PostgreSQL. Many daily subscriptions fall due in one clock advance; while it claims,
charges and finishes them, every subscription is cancelled or paused from several
connections, spread over the renewal window. The race runs once per backend; the tests
below read what it left:

- no ``payment.captured`` for a subscription is recorded after its acknowledged cancel
  or pause, and its charges read after the acknowledgement never grow;
- no renewal is *torn*: the stop's event, and the subscription read
  right after the acknowledgement, show every cycle that was charged, and no
  subscription event follows the stop, so a consumer applying events in order never
  re-activates a cancelled subscription.
"""

from __future__ import annotations

import random
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import httpx2
import pytest

from tests.sandbox.clients import signed_client
from tests.sandbox.subscriptions.api import sub_body

#: Subscriptions per run: enough that stops land in every step of the renewal. The
#: renewal pass and the stops' span both grow with it, so a smaller run overlaps them as
#: much (one run each on a loaded machine: at 100, 30% and 65% of the stops came before
#: their renewal on SQLite and PostgreSQL, at 200 15% and 47%), in half the requests.
SUBSCRIPTIONS = 100
#: Between two stop requests' start times; the stops span SUBSCRIPTIONS * PACE seconds.
PACE = 0.005
STOPPED = {"cancel": "subscription.cancelled", "pause": "subscription.paused"}


#: The two-worker sandbox (the ``workers`` fixture) runs no reconciler: the only passes
#: are the clock advances this module sends.
RECONCILER = False


@dataclass
class Race:
    """What one race left: each subscription's stop, what was read after it, its events."""

    ids: list[str]
    actions: dict[str, str]
    #: Captured charges and cycleNumber read right after the stop was acknowledged.
    seen_after_ack: dict[str, tuple[int, int]]
    #: Captured charges at the end (after one more reconciler pass).
    at_end: dict[str, int]
    #: Each subscription's events, oldest first.
    history: dict[str, list[dict[str, Any]]]


def _captured(client: httpx2.Client, sub_id: str) -> int:
    response = client.get(f"/v1/subscriptions/{sub_id}/charges")
    assert response.status_code == 200, response.text
    return sum(1 for item in response.json()["items"] if item["status"] == "captured")


@pytest.fixture(scope="module")
def race(workers: tuple[str, str, int]) -> Race:
    """Create the subscriptions, advance the clock past their renewal, stop each meanwhile."""
    base = workers[0]
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
            # race sends about 500 requests as fast as the machine allows.
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

        def stop(item: tuple[int, str]) -> tuple[str, tuple[int, int]]:
            index, sub_id = item
            time.sleep(max(0.0, start + index * PACE - time.monotonic()))
            action = actions[sub_id]
            body = {"atPeriodEnd": False} if action == "cancel" else {}
            response = client().post(f"/v1/subscriptions/{sub_id}/{action}", json=body)
            assert response.status_code == 200, (action, response.text)
            assert response.json()["status"] == ("cancelled" if action == "cancel" else "paused")
            read = client().get(f"/v1/subscriptions/{sub_id}")
            assert read.status_code == 200, read.text
            return sub_id, (_captured(client(), sub_id), int(read.json()["cycleNumber"]))

        with ThreadPoolExecutor(max_workers=8) as pool:
            seen_after_ack = dict(pool.map(stop, enumerate(order)))
        runner.join(timeout=120)
        assert not runner.is_alive(), "the clock advance did not answer within 120 s"
        assert [r.status_code for r in advanced] == [200], [r.text for r in advanced]

        with signed_client(base) as check:
            assert check.post("/sandbox/reconciler/tick", json={}).status_code == 200
            events = check.get("/sandbox/events").json()["items"]
        # Read after the race and the last pass: several at once change nothing but time.
        with ThreadPoolExecutor(max_workers=8) as pool:
            counts = pool.map(lambda sub_id: _captured(client(), sub_id), ids)
            at_end = dict(zip(ids, counts, strict=True))
    finally:
        for c in clients:
            c.close()

    history: dict[str, list[dict[str, Any]]] = {sub_id: [] for sub_id in ids}
    for event in events:
        data: dict[str, Any] = event["data"]
        if data.get("subscriptionId") in history:
            history[data["subscriptionId"]].append(event)
    return Race(ids, actions, seen_after_ack, at_end, history)


def _stop_index(race: Race, sub_id: str) -> int:
    types = [e["type"] for e in race.history[sub_id]]
    return types.index(STOPPED[race.actions[sub_id]])


def test_no_renewal_charge_is_captured_after_an_acknowledged_cancel_or_pause(race: Race) -> None:
    after_stop = {}
    for sub_id, events in race.history.items():
        types = [e["type"] for e in events]
        after_stop[sub_id] = types[_stop_index(race, sub_id) :].count("payment.captured")
    grew = {
        s: (race.seen_after_ack[s][0], race.at_end[s])
        for s in race.ids
        if race.at_end[s] > race.seen_after_ack[s][0]
    }
    charged_before = sum(1 for s in race.ids if race.at_end[s])
    print(
        f"{SUBSCRIPTIONS} subscriptions: {charged_before} renewed before their stop, "
        f"{sum(after_stop.values())} captured after an acknowledged stop"
    )
    assert {s: n for s, n in after_stop.items() if n} == {}
    assert grew == {}


def test_no_renewal_is_torn_by_a_cancel_or_pause(race: Race) -> None:
    torn: dict[str, list[str]] = {}
    for sub_id, events in race.history.items():
        stop = _stop_index(race, sub_id)
        charged = race.at_end[sub_id]
        problems = []
        if events[stop]["data"]["cycleNumber"] != charged:
            problems.append(f"stop event cycle {events[stop]['data']['cycleNumber']} != {charged}")
        if race.seen_after_ack[sub_id][1] != charged:
            problems.append(f"read after the stop: cycle {race.seen_after_ack[sub_id][1]}")
        later = [e["type"] for e in events[stop + 1 :] if e["type"].startswith("subscription.")]
        if later:
            problems.append(f"after the stop: {later}")
        if problems:
            torn[sub_id] = problems
    charged_before = sum(1 for s in race.ids if race.at_end[s])
    print(f"{SUBSCRIPTIONS} subscriptions, {charged_before} charged: {len(torn)} torn renewals")
    assert torn == {}, list(torn.values())[:3]
