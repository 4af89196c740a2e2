"""Restart: a renewal claimed (or charged) but not finished when the server stopped is
finished exactly once by the restarted server: one payment, one cycle, no cycle lost."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta

import pytest
import sqlalchemy as sa

from tests.sandbox.clients import signed_client
from tests.sandbox.subscriptions.api import charges, create, get
from tests.sandbox.subscriptions.clock import parse, tick
from workbench.sandbox import DEMO_MERCHANT_ID, SandboxRuntime, SandboxServer
from workbench.sandbox.clock import set_business_time
from workbench.sandbox.payments.tables import payments as payments_table
from workbench.sandbox.subscriptions import RenewalWork, subscription_charges


@pytest.mark.parametrize("stopped_after", ["claim", "charge"])
def test_an_unfinished_renewal_is_finished_exactly_once_after_restart(
    sandbox_with: Callable[..., SandboxServer], stopped_after: str
) -> None:
    first = sandbox_with()
    with signed_client(first.base_url) as client:
        sub = create(client)
    first.stop()
    due = parse(sub["nextChargeAt"])

    # A pass that died: the first steps of the reconciler ran, the last did not.
    crashed = SandboxRuntime(first.config).open()
    work = RenewalWork(crashed.db)
    with crashed.db.write() as conn:
        set_business_time(conn, DEMO_MERCHANT_ID, due + timedelta(seconds=1))
    settled, claimed = work.claim_due(DEMO_MERCHANT_ID, due)
    assert (settled, len(claimed)) == (0, 1)
    if stopped_after == "charge":
        work.charge_claims(DEMO_MERCHANT_ID, claimed, due)
    crashed.stop()

    second = sandbox_with()  # on the same database
    with signed_client(second.base_url) as client:
        assert get(client, sub["id"])["cycleNumber"] == 0
        tick(client)
        tick(client)
        after = get(client, sub["id"])
        items = charges(client, sub["id"])
        with second.sandbox.db.read() as conn:
            payments = conn.execute(
                sa.select(sa.func.count())
                .select_from(payments_table)
                .where(payments_table.c.transaction_id.like(f"renewal {sub['id']} %"))
            ).scalar_one()
            states = conn.execute(sa.select(subscription_charges.c.state)).scalars().all()
        renewed = client.get("/sandbox/events", params={"type": "subscription.renewed"}).json()
    assert after["cycleNumber"] == 1
    assert after["status"] == "active"
    assert [(i["cycleNumber"], i["status"]) for i in items] == [(1, "captured")]
    assert payments == 1
    assert states == ["done"]
    assert len(renewed["items"]) == 1
    assert parse(after["nextChargeAt"]) > due
