"""The reconciler lease: one pass at a time per database, handed back after each pass."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator

import pytest
import sqlalchemy as sa

from tests.sandbox.clients import signed_client
from tests.sandbox.envelope import assert_envelope
from workbench.sandbox import SandboxConfig, SandboxServer, tables
from workbench.sandbox.fixtures import DEMO_MERCHANT_ID
from workbench.sandbox.reconciler import lease_name
from workbench.sandbox.runtime import SandboxRuntime


@pytest.fixture
def two(own_db: str) -> Iterator[list[SandboxRuntime]]:
    """Two sandboxes on one database, as two workers are."""
    config = SandboxConfig(db_url=own_db, run_reconciler_in_background=False)
    pair = [SandboxRuntime(config).open() for _ in range(2)]
    try:
        yield pair
    finally:
        for sandbox in pair:
            sandbox.stop()


def _holder(sandbox: SandboxRuntime) -> tuple[str, object] | None:
    with sandbox.db.read() as conn:
        row = conn.execute(
            sa.select(tables.leases.c.holder, tables.leases.c.expires_at).where(
                tables.leases.c.name == lease_name(DEMO_MERCHANT_ID)
            )
        ).first()
    return None if row is None else (row.holder, row.expires_at)


def test_a_pass_hands_the_lease_back(two: list[SandboxRuntime]) -> None:
    a, b = two
    a.tick(DEMO_MERCHANT_ID)
    holder = _holder(a)
    assert holder is not None
    assert holder[0] == a.reconciler.holder
    # A's pass has ended: B takes the lease at once, without waiting for it to expire.
    b.reconciler.tick(DEMO_MERCHANT_ID, wait=False)
    assert _holder(b)[0] == b.reconciler.holder  # type: ignore[index]
    before = a.advance_clock(0)
    assert b.advance_clock(60) > before


class _Slow:
    """Work that keeps its pass, and so the lease, until released."""

    name = "slow"

    def __init__(self) -> None:
        self.inside, self.release = threading.Event(), threading.Event()

    def next_due(self, conn: sa.Connection, merchant_id: str) -> None:
        return None

    def pending_merchants(self, conn: sa.Connection) -> set[str]:
        return set()

    def run(self, merchant_id: str, now: object, deadline: float) -> int:
        self.inside.set()
        self.release.wait(10)
        return 0


@contextlib.contextmanager
def pass_in_progress(sandbox: SandboxRuntime) -> Iterator[None]:
    """``sandbox`` holds the lease in a pass on another thread until the block ends."""
    slow = _Slow()
    sandbox.reconciler.register(slow)
    thread = threading.Thread(target=sandbox.reconciler.tick, args=(DEMO_MERCHANT_ID,))
    thread.start()
    try:
        assert slow.inside.wait(10)
        yield
    finally:
        slow.release.set()
        thread.join()


def test_a_second_process_waits_for_the_pass_in_progress(two: list[SandboxRuntime]) -> None:
    a, b = two
    with pass_in_progress(a):
        skipped = b.reconciler.tick(DEMO_MERCHANT_ID, wait=False)
        assert set(skipped.values()) == {0}
        assert _holder(b)[0] == a.reconciler.holder  # type: ignore[index]
    b.advance_clock(1)
    assert _holder(b)[0] == b.reconciler.holder  # type: ignore[index]


def test_an_advance_that_cannot_get_the_lease_answers_503(
    two: list[SandboxRuntime],
    sandbox_with: Callable[..., SandboxServer],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    a, _ = two
    monkeypatch.setattr("workbench.sandbox.reconciler._WAIT_SECONDS", 0.3)
    server = sandbox_with()  # on the database of the two
    with pass_in_progress(a), signed_client(server.base_url) as client:
        response = client.post("/sandbox/clock/advance", json={"seconds": 60})
    body = assert_envelope(response, 503, "SVC-GW-5030")
    assert "reconciler lease" in body["message"]
    assert response.headers["Retry-After"] == "1"
