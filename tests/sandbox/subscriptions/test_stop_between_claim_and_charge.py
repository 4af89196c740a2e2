"""A renewal claimed, then a cancel, pause or charge-now acknowledged, then the charge step.

The reconciler's steps are run by hand on the sandbox's database so the request lands
exactly between claim and charge (the race test in `test_cancel_during_renewal` hits
the same window over HTTP with two workers). A stop since the claim means no payment;
a charge-now since the claim joins the claimed charge: one payment.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any

import httpx2
import pytest
import sqlalchemy as sa

from tests.sandbox.clients import signed_client
from tests.sandbox.subscriptions.api import charges, create, get, post, sub_events
from tests.sandbox.subscriptions.clock import parse
from workbench.sandbox import DEMO_MERCHANT_ID, SandboxServer
from workbench.sandbox.clock import set_business_time
from workbench.sandbox.payments.tables import payments as payments_table
from workbench.sandbox.subscriptions import RenewalWork, subscription_charges


@pytest.fixture
def running(sandbox_with: Callable[..., SandboxServer]) -> SandboxServer:
    """A sandbox of this test's own on each backend, reconciler off."""
    return sandbox_with()


def _claimed(server: SandboxServer, client: httpx2.Client) -> tuple[dict[str, Any], list[int]]:
    sub = create(client)
    due = parse(sub["nextChargeAt"]) + timedelta(seconds=1)
    with server.sandbox.db.write() as conn:
        set_business_time(conn, DEMO_MERCHANT_ID, due)
    settled, claimed = RenewalWork(server.sandbox.db).claim_due(DEMO_MERCHANT_ID, due)
    assert (settled, len(claimed)) == (0, 1)
    return sub, claimed


def _charge_and_finish(server: SandboxServer, claimed: list[int]) -> None:
    work = RenewalWork(server.sandbox.db)
    with server.sandbox.db.read() as conn:
        now = conn.execute(sa.select(sa.func.max(subscription_charges.c.due_at))).scalar_one()
    now += timedelta(seconds=1)
    work.charge_claims(DEMO_MERCHANT_ID, claimed, now)
    work.finish_claims(DEMO_MERCHANT_ID, claimed, now)


def _renewal_payments(server: SandboxServer, sub_id: str) -> int:
    with server.sandbox.db.read() as conn:
        return int(
            conn.execute(
                sa.select(sa.func.count())
                .select_from(payments_table)
                .where(payments_table.c.transaction_id.like(f"renewal {sub_id} %"))
            ).scalar_one()
        )


@pytest.mark.parametrize(
    ("action", "body", "status", "stop_event"),
    [
        ("cancel", {"atPeriodEnd": False}, "cancelled", "subscription.cancelled"),
        ("pause", {}, "paused", "subscription.paused"),
        ("cancel", {"atPeriodEnd": True}, "cancelled", "subscription.cancel_scheduled"),
    ],
    ids=["cancel", "pause", "cancel-at-period-end"],
)
def test_a_stop_acknowledged_after_the_claim_is_never_charged(
    running: SandboxServer, action: str, body: dict[str, Any], status: str, stop_event: str
) -> None:
    with signed_client(running.base_url) as client:
        sub, claimed = _claimed(running, client)
        answer = post(client, sub["id"], action, body)
        assert answer.status_code == 200, answer.text
        _charge_and_finish(running, claimed)
        after = get(client, sub["id"])
        events = sub_events(client, sub["id"])
        items = charges(client, sub["id"])
        assert client.post("/sandbox/reconciler/tick", json={}).status_code == 200
        assert get(client, sub["id"]) == after
    assert _renewal_payments(running, sub["id"]) == 0
    assert items == []
    assert (after["status"], after["cycleNumber"]) == (status, 0)
    assert "subscription.renewed" not in events
    assert stop_event in events
    with running.sandbox.db.read() as conn:
        states = conn.execute(sa.select(subscription_charges.c.state)).scalars().all()
    assert states == ["abandoned"]


def test_a_paused_then_resumed_claim_is_charged_once(running: SandboxServer) -> None:
    with signed_client(running.base_url) as client:
        sub, claimed = _claimed(running, client)
        assert post(client, sub["id"], "pause").status_code == 200
        assert post(client, sub["id"], "resume").status_code == 200
        _charge_and_finish(running, claimed)
        assert client.post("/sandbox/reconciler/tick", json={}).status_code == 200
        after = get(client, sub["id"])
        items = charges(client, sub["id"])
    assert (after["status"], after["cycleNumber"]) == ("active", 1)
    assert [i["status"] for i in items] == ["captured"]
    assert _renewal_payments(running, sub["id"]) == 1


def test_a_charge_now_during_a_claimed_charge_joins_it(running: SandboxServer) -> None:
    with signed_client(running.base_url) as client:
        sub, claimed = _claimed(running, client)
        receipt = post(client, sub["id"], "charge-now")
        assert receipt.status_code == 202, receipt.text
        assert get(client, sub["id"])["status"] == "charging"
        _charge_and_finish(running, claimed)
        assert client.post("/sandbox/reconciler/tick", json={}).status_code == 200
        after = get(client, sub["id"])
        items = charges(client, sub["id"])
    assert (after["status"], after["cycleNumber"]) == ("active", 1)
    assert [i["status"] for i in items] == ["captured"]
    assert _renewal_payments(running, sub["id"]) == 1


@pytest.mark.parametrize(
    ("action", "body", "status", "stop_event"),
    [
        ("cancel", {"atPeriodEnd": False}, "cancelled", "subscription.cancelled"),
        ("pause", {}, "paused", "subscription.paused"),
        ("portal-cancel", {"atPeriodEnd": False}, "cancelled", "subscription.cancelled"),
    ],
    ids=["cancel", "pause", "portal-cancel"],
)
def test_a_stop_after_the_charge_finishes_the_charged_cycle_first(
    running: SandboxServer, action: str, body: dict[str, Any], status: str, stop_event: str
) -> None:
    """A stop that meets a charge made but not finished applies it first.

    Its event shows the charged cycle, ``subscription.renewed`` precedes it, and the
    reconciler's finish step records nothing after it.
    """
    with signed_client(running.base_url) as client:
        sub, claimed = _claimed(running, client)
        with running.sandbox.db.read() as conn:
            now = conn.execute(sa.select(sa.func.max(subscription_charges.c.due_at))).scalar_one()
        RenewalWork(running.sandbox.db).charge_claims(DEMO_MERCHANT_ID, claimed, now)
        if action == "portal-cancel":
            answer = client.post(f"/v1/public/subscriptions/{sub['publicHash']}/cancel", json=body)
        else:
            answer = post(client, sub["id"], action, body)
        assert answer.status_code == 200, answer.text
        acknowledged = get(client, sub["id"])
        RenewalWork(running.sandbox.db).finish_claims(DEMO_MERCHANT_ID, claimed, now)
        assert client.post("/sandbox/reconciler/tick", json={}).status_code == 200
        after = get(client, sub["id"])
        items = client.get("/sandbox/events").json()["items"]
    mine = [e for e in items if e["data"].get("subscriptionId") == sub["id"]]
    types = [e["type"] for e in mine if e["type"].startswith("subscription.")]
    stop = next(e for e in mine if e["type"] == stop_event)
    assert (acknowledged["status"], acknowledged["cycleNumber"]) == (status, 1)
    assert after == acknowledged
    assert stop["data"]["cycleNumber"] == 1
    assert types == ["subscription.created", "subscription.renewed", stop_event]
    assert _renewal_payments(running, sub["id"]) == 1
    with running.sandbox.db.read() as conn:
        states = conn.execute(sa.select(subscription_charges.c.state)).scalars().all()
    assert states == ["done"]
