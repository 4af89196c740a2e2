"""A clock advance cut off by ``kill -9`` and replayed with its Idempotency-Key after a
restart finishes the same advance: the clock stops at the target fixed when the key was
first claimed (the seconds are never added again), and each period of each subscription
is charged once.

The sandbox is killed in the middle of the advance, at a known point: a ``sitecustomize``
of the test's own holds the first pass of renewal work that charged something (the clock
has moved one day of five), and the test kills the process while it is held. The replay
first meets the crashed request's claim (409 SVC-GW-2002 until it lapses, 60 s after it
was made); the test then ages the claim, and the killed process's reconciler lease (which
frees a dead holder's merchant 30 s after it was taken), in the database instead of
waiting them out.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx2
import pytest
import sqlalchemy as sa

from tests.paths import ROOT
from tests.ports import free_port
from tests.postgres import database_url
from tests.sandbox.clients import signed_client
from tests.sandbox.envelope import assert_envelope
from tests.sandbox.subscriptions.api import charges, create
from tests.sandbox.workers import answers, children
from workbench.sandbox.tables import idempotency_records, leases

DAYS = 5
SUBSCRIPTIONS = 3

#: Loaded by the first sandbox only (``HOLD_MARKER`` set): the first renewal pass that
#: charged anything marks the file and then waits to be killed.
_HOLD_AFTER_FIRST_CHARGE = """
import os

if os.environ.get("HOLD_MARKER"):
    import pathlib
    import time

    from workbench.sandbox.subscriptions import renewals

    _run = renewals.RenewalWork.run

    def run(self, merchant_id, now, deadline):
        done = _run(self, merchant_id, now, deadline)
        if done:
            pathlib.Path(os.environ["HOLD_MARKER"]).touch()
            time.sleep(600)
        return done

    renewals.RenewalWork.run = run
"""


@pytest.fixture(params=["sqlite", "postgres"])
def db(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    if not Path("/proc").is_dir():
        pytest.skip("following the sandbox's processes reads /proc (Linux only)")
    with database_url(request.param, tmp_path) as url:
        yield url


def _start(url: str, port: int, site: Path, marker: Path | None) -> subprocess.Popen[bytes]:
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(site), str(ROOT)]),
        "WORKBENCH_API_KEY": "",
        "WORKBENCH_SECRET_KEY": "",
    }
    env.pop("HOLD_MARKER", None)
    if marker is not None:
        env["HOLD_MARKER"] = str(marker)
    command = [sys.executable, "-m", "workbench", "sandbox", "--port", str(port), "--db", url]
    proc = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 180  # a guard: a loaded machine has taken a minute
    while not answers(f"http://127.0.0.1:{port}"):
        assert proc.poll() is None, "the sandbox exited while starting"
        assert time.monotonic() < deadline, "the sandbox did not start within 180 s"
        time.sleep(0.2)
    return proc


def _kill_9(proc: subprocess.Popen[bytes]) -> None:
    below = children(proc.pid)
    proc.kill()
    proc.wait(timeout=30)
    for pid in below:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


def _parse(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00")).astimezone(UTC)


def test_an_advance_replayed_after_kill_9_stops_at_its_target_and_charges_each_period_once(
    db: str, tmp_path: Path
) -> None:
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(_HOLD_AFTER_FIRST_CHARGE, "utf-8")
    marker = tmp_path / "held"
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    key = str(uuid.uuid4())
    advance = {"seconds": DAYS * 86_400}

    first = _start(db, port, site, marker)
    try:
        with signed_client(base) as client:
            subs = [create(client, intervalUnit="day")["id"] for _ in range(SUBSCRIPTIONS)]
            fixtures = client.get("/sandbox/fixtures")
        began = time.monotonic()
        before = _parse(fixtures.json()["businessTime"])  # to the second, rounded down
        cut_off: list[BaseException] = []

        def send() -> None:
            with signed_client(base) as sender:
                try:
                    sender.post(
                        "/sandbox/clock/advance", json=advance, headers={"Idempotency-Key": key}
                    )
                except httpx2.TransportError as exc:  # the kill, as expected
                    cut_off.append(exc)

        sender = threading.Thread(target=send)
        sender.start()
        deadline = time.monotonic() + 120
        while not marker.exists():
            assert time.monotonic() < deadline, "the advance charged nothing within 120 s"
            assert sender.is_alive(), "the advance answered before it was held"
            time.sleep(0.05)
    finally:
        _kill_9(first)
    sender.join(timeout=60)
    assert len(cut_off) == 1

    second = _start(db, port, site, None)
    try:
        with signed_client(base) as client:
            waiting = client.post(
                "/sandbox/clock/advance", json=advance, headers={"Idempotency-Key": key}
            )
            assert_envelope(waiting, 409, "SVC-GW-2002")
            assert waiting.headers["Retry-After"] == "1"
            engine = sa.create_engine(db)
            try:
                with engine.begin() as conn:
                    claim = conn.execute(
                        sa.select(idempotency_records).where(idempotency_records.c.key == key)
                    ).one()
                    assert claim.state == "pending"
                    assert claim.locked_until - claim.created_at == timedelta(seconds=60)
                    # As a minute later: the crashed request's claim has lapsed.
                    conn.execute(
                        sa.update(idempotency_records)
                        .where(idempotency_records.c.id == claim.id)
                        .values(locked_until=claim.created_at)
                    )
                    # And the killed process's reconciler lease has expired (30 s after
                    # it was taken), which the replay's advance would wait out otherwise.
                    held = sa.and_(
                        leases.c.name.startswith("reconciler:"),
                        leases.c.expires_at > claim.created_at,
                    )
                    aged = conn.execute(
                        sa.update(leases).where(held).values(expires_at=claim.created_at)
                    )
                    assert aged.rowcount == 1  # the advance's merchant's, taken by the first
            finally:
                engine.dispose()
            replay = client.post(
                "/sandbox/clock/advance", json=advance, headers={"Idempotency-Key": key}
            )
            elapsed = timedelta(seconds=time.monotonic() - began)
            assert replay.status_code == 200, replay.text
            again = client.post(
                "/sandbox/clock/advance", json=advance, headers={"Idempotency-Key": key}
            )
            captured = {
                sub: sorted(
                    item["cycleNumber"]
                    for item in charges(client, sub)
                    if item["status"] == "captured"
                )
                for sub in subs
            }
            reached = _parse(client.get("/sandbox/fixtures").json()["businessTime"])
    finally:
        _kill_9(second)

    ended = _parse(replay.json()["businessTime"])
    target = before + timedelta(seconds=advance["seconds"])
    print(f"the replay ended {ended - target} after before + {DAYS} days; renewals {captured}")
    # The target was fixed within the second read as `before` and the claim; the answer
    # is the clock read once the replay had finished, a moment after it reached the target.
    assert target <= ended <= target + elapsed + timedelta(seconds=1)
    assert again.content == replay.content
    assert reached < target + elapsed + timedelta(seconds=2)
    assert captured == {sub: list(range(1, DAYS + 1)) for sub in subs}
