"""`KeyCache` empties itself when a key's tables change, whoever changes them.

The cache watches the writes run on the sandbox's engine (`KeyCache.watch`): a domain
function that changes a key or a merchant's switches, called on a connection of its
own rather than by a control route, leaves no stale record behind, and only once its
transaction has committed; other writes leave the kept records alone.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa

from tests.postgres import database_url
from workbench.config import DEFAULT_API_KEY
from workbench.sandbox import (
    DEMO_MERCHANT_ID,
    DEMO_STORE_ID,
    SandboxConfig,
    keys,
    tables,
)
from workbench.sandbox.context import Caller
from workbench.sandbox.control import service as control
from workbench.sandbox.payments import service as payments
from workbench.sandbox.payments.models import ChargeRequest
from workbench.sandbox.runtime import SandboxRuntime
from workbench.sandbox.schema import TABLES
from workbench.sandbox.storage import ReadPlan

Change = Callable[[sa.Connection], object]
_K = tables.api_keys

CHANGES: dict[str, Change] = {
    "fail-next": lambda conn: control.set_fail_next(conn, DEMO_MERCHANT_ID, "500"),
    "latency": lambda conn: control.set_latency(conn, DEMO_MERCHANT_ID, 20),
    "rate limit": lambda conn: control.set_rate_limit(conn, DEMO_MERCHANT_ID, 5.0, 2),
    "reset": lambda conn: control.reset_merchant(conn, DEMO_MERCHANT_ID, TABLES),
    "revoked key": lambda conn: conn.execute(
        sa.update(_K).where(_K.c.api_key == DEFAULT_API_KEY).values(revoked=True)
    ),
}


@pytest.fixture(params=["sqlite", "postgres"])
def sandbox(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[SandboxRuntime]:
    """An open sandbox of this test's own, no background work."""
    with database_url(request.param, tmp_path) as url:
        config = SandboxConfig(db_url=url, run_reconciler_in_background=False)
        opened = SandboxRuntime(config).open()
        try:
            yield opened
        finally:
            opened.stop()


def _keep(sandbox: SandboxRuntime) -> keys.KeyRecord:
    """The demo key's record, read and kept as a signed request keeps it."""
    stamp = sandbox.keys.stamp()
    record = keys.look_up(sandbox.db, DEFAULT_API_KEY)
    assert record is not None
    sandbox.keys.put(record, stamp)
    assert sandbox.keys.get(DEFAULT_API_KEY) == record
    return record


@pytest.mark.parametrize("change", CHANGES.values(), ids=CHANGES.keys())
def test_a_domain_function_changing_a_key_or_a_switch_empties_the_cache_after_commit(
    sandbox: SandboxRuntime, change: Change
) -> None:
    _keep(sandbox)
    with sandbox.db.write() as conn:
        change(conn)
        # Not yet: a request reading the row now still reads the old one.
        assert sandbox.keys.get(DEFAULT_API_KEY) is not None
    assert sandbox.keys.get(DEFAULT_API_KEY) is None


def test_taking_the_fail_next_switch_empties_the_cache(sandbox: SandboxRuntime) -> None:
    with sandbox.db.write() as conn:
        control.set_fail_next(conn, DEMO_MERCHANT_ID, "500")
    assert _keep(sandbox).fail_next == "500"
    assert control.consume_fail_next(sandbox.db, DEMO_MERCHANT_ID, "500") == "500"
    assert sandbox.keys.get(DEFAULT_API_KEY) is None


def test_a_charge_and_other_writes_leave_the_cache_alone(sandbox: SandboxRuntime) -> None:
    record = _keep(sandbox)
    caller = Caller(DEFAULT_API_KEY, DEMO_MERCHANT_ID, DEMO_STORE_ID, "req_key_cache")
    body = ChargeRequest.model_validate(
        {
            "transactionId": "key-cache-charge",
            "amount": 15000,
            "currency": "TRY",
            "cardToken": "tok_test_success",
            "threeDSecure": False,
        }
    )
    reads = payments.ChargeReads(ReadPlan(), caller, body)
    digest = payments.fingerprint(body)
    reply = sandbox.db.transact(
        lambda conn: payments.charge(conn, caller, body, "http://127.0.0.1:8000", digest, reads)
    )
    assert reply.status == 201
    s = tables.stores
    with sandbox.db.write() as conn:
        conn.execute(sa.update(s).where(s.c.id == DEMO_STORE_ID).values(webhook_url=None))
    assert sandbox.keys.get(DEFAULT_API_KEY) == record


@pytest.mark.parametrize("change", CHANGES.values(), ids=CHANGES.keys())
def test_a_change_in_the_loops_write_group_empties_the_cache_after_its_commit(
    tmp_path: Path, change: Change
) -> None:
    config = SandboxConfig(
        db_url=f"sqlite:///{tmp_path / 'keys.db'}", run_reconciler_in_background=False
    )
    sandbox = SandboxRuntime(config).open()
    try:
        _keep(sandbox)
        kept_meanwhile: list[bool] = []

        def work(conn: sa.Connection) -> None:
            change(conn)
            kept_meanwhile.append(sandbox.keys.get(DEFAULT_API_KEY) is not None)

        async def groups() -> None:
            await sandbox.db.atransact(lambda conn: None)  # the write connection is kept
            await sandbox.db.atransact(work)

        asyncio.run(groups())
        assert kept_meanwhile == [True]  # not before the commit
        assert sandbox.keys.get(DEFAULT_API_KEY) is None
        _keep(sandbox)  # and the next group's connection is not marked
        asyncio.run(sandbox.db.atransact(lambda conn: None))
        assert sandbox.keys.get(DEFAULT_API_KEY) is not None
    finally:
        sandbox.stop()
