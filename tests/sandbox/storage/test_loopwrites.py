"""`LoopWrites` on a served SQLite file: writes wait for a taken lock without stalling the loop.

The lock is taken here through a second `WriteLock` on the same file, which ``flock``
treats as another process would be: the server cannot see the difference.
"""

from __future__ import annotations

import asyncio
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import httpx2
import pytest
import sqlalchemy as sa

from tests.sandbox.bodies import charge_body
from tests.sandbox.clients import signed_client
from workbench.sandbox import SandboxConfig, SandboxServer
from workbench.sandbox.storage import Database, WriteLock
from workbench.sandbox.storage.loopwrites import LoopWrites

if TYPE_CHECKING:
    from workbench.sandbox.storage.groups import TransactionGroup

#: How long a request may take to be answered: a guard against a hang on a loaded
#: machine, never asserted as a duration (a stalled loop would not answer at all).
ANSWER_WAIT = 30.0


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[SandboxServer, WriteLock]]:
    config = SandboxConfig(
        db_url=f"sqlite:///{tmp_path / 'sandbox.db'}", run_reconciler_in_background=False
    )
    with SandboxServer(config) as server:
        path = server.app.state.sandbox.db.sidecar("write.lock")
        other = WriteLock(path)
        try:
            yield server, other
        finally:
            other.close()


def _charge(base: str) -> httpx2.Response:
    with signed_client(base) as client:
        return client.post(
            "/v1/payments/card",
            json=charge_body(threeDSecure=False),
            headers={"Idempotency-Key": str(uuid.uuid4())},
            timeout=ANSWER_WAIT,
        )


def test_charges_wait_for_another_holder_and_the_loop_keeps_serving(
    served: tuple[SandboxServer, WriteLock],
) -> None:
    server, other = served
    assert other.acquire(blocking=False)
    released = False
    try:
        with ThreadPoolExecutor(max_workers=4) as pool:
            pending = [pool.submit(_charge, server.base_url) for _ in range(4)]
            time.sleep(0.5)
            assert not any(future.done() for future in pending)
            # Reads and unauthenticated routes still answer while the writes wait.
            # The lock stays taken until after they answer: a loop that waited for it would
            # answer nothing before the release, however long the client waited.
            healthz = httpx2.get(server.base_url + "/healthz", timeout=ANSWER_WAIT, verify=False)
            assert healthz.status_code == 200
            with signed_client(server.base_url) as client:  # 30 s, as ANSWER_WAIT
                assert client.get("/sandbox/fixtures").status_code == 200
            assert not any(future.done() for future in pending)
            other.release()
            released = True
            responses = [future.result(timeout=ANSWER_WAIT) for future in pending]
    finally:
        if not released:
            other.release()
    assert [r.status_code for r in responses] == [201] * 4
    ids = {r.json()["paymentId"] for r in responses}
    with signed_client(server.base_url) as client:
        for payment_id in ids:
            assert client.get(f"/v1/payments/{payment_id}").json()["status"] == "captured"


def test_the_lock_is_handed_back_between_groups(served: tuple[SandboxServer, WriteLock]) -> None:
    """While charges stream in, another holder still gets the lock, again and again."""
    server, other = served
    stop = threading.Event()

    def stream() -> int:
        count = 0
        while not stop.is_set():
            assert _charge(server.base_url).status_code == 201
            count += 1
        return count

    with ThreadPoolExecutor(max_workers=4) as pool:
        streams = [pool.submit(stream) for _ in range(4)]
        taken = 0
        deadline = time.monotonic() + 60  # a guard against a lock never handed back
        while taken < 20 and time.monotonic() < deadline:
            if other.acquire(blocking=False):
                taken += 1
                other.release()
            time.sleep(0.005)
        stop.set()
        charged = sum(future.result(timeout=30) for future in streams)
    assert taken == 20
    assert charged > 0


class _RecordedGroup:
    """A stand-in for `TransactionGroup`: notes which writes ran in it."""

    def __init__(self, groups: list[list[str]], lock: WriteLock) -> None:
        self.members: list[str] = []
        self._lock = lock
        groups.append(self.members)

    def finish(self) -> None:
        self._lock.release()


def _groups_of_two_writes_a_turn_apart(first_group_size: int) -> list[list[str]]:
    """Run a group of ``first_group_size`` writes, then write "c" and, a turn later, "d"."""
    groups: list[list[str]] = []
    lock = WriteLock(None)

    async def main() -> None:
        writes = LoopWrites(
            lock,
            lambda: cast("TransactionGroup", _RecordedGroup(groups, lock)),
            asyncio.get_running_loop(),
        )

        def write(name: str) -> Callable[[], str]:
            def work() -> str:
                groups[-1].append(name)
                return name

            return work

        first = [write(f"first-{n}") for n in range(first_group_size)]
        await asyncio.gather(*(writes.run(w) for w in first))
        c = asyncio.ensure_future(writes.run(write("c")))
        await asyncio.sleep(0)  # "c" is asked for in this turn, "d" in the next
        d = asyncio.ensure_future(writes.run(write("d")))
        assert list(await asyncio.gather(c, d)) == ["c", "d"]

    asyncio.run(main())
    return groups


def test_after_a_shared_group_the_next_waits_a_turn_for_company() -> None:
    groups = _groups_of_two_writes_a_turn_apart(2)
    assert groups == [["first-0", "first-1"], ["c", "d"]]


def test_a_lone_callers_write_does_not_wait_the_extra_turn() -> None:
    groups = _groups_of_two_writes_a_turn_apart(1)
    assert groups == [["first-0"], ["c"], ["d"]]


def test_write_groups_keep_one_connection_until_something_is_noted_on_it(
    tmp_path: Path,
) -> None:
    db = Database(f"sqlite:///{tmp_path / 'groups.db'}")
    returned: list[bool] = []

    @sa.event.listens_for(db.engine, "checkin")
    def _returned(_dbapi_conn: object, record: Any) -> None:
        returned.append(record.info.pop("noted", False))

    def noted(conn: sa.Connection) -> sa.Connection:
        conn.info["noted"] = True  # as the key cache marks a connection that wrote a key
        return conn

    async def groups() -> list[sa.Connection]:
        return [
            await db.atransact(lambda conn: conn),
            await db.atransact(lambda conn: conn),
            await db.atransact(noted),
            await db.atransact(lambda conn: conn),
        ]

    try:
        first, second, third, fourth = asyncio.run(groups())
        assert first is second is third  # no checkout and checkin per group
        assert returned == [True]  # the noted one went back to the pool after its commit
        assert fourth is not third
    finally:
        db.dispose()
