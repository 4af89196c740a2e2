"""Every caller row of the subscription state table, and every action the table forbids.

The spec's rows have a test each, named after the row; the table-driven tests then
walk every caller row of `workbench.spec.SUBSCRIPTION` (the spec's and our decisions)
and every (state, action) pair the table does not list.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import httpx2
import pytest

from tests.sandbox.envelope import assert_envelope
from tests.sandbox.subscriptions.api import AYSE, MEHMET, charges, create, get, post, sub_events
from tests.sandbox.subscriptions.clock import advance, now, parse, tick
from workbench.sandbox.subscriptions import after
from workbench.spec import SUBSCRIPTION

DAY = 86_400


def in_state(client: httpx2.Client, state: str) -> dict[str, Any]:
    """A fresh subscription brought into ``state`` through the API."""
    if state == "active":
        return create(client)
    if state == "trialing":
        trial_end = now(client) + timedelta(days=14)
        return create(client, trialEndAt=trial_end.strftime("%Y-%m-%dT%H:%M:%SZ"))
    if state == "paused":
        sub = create(client)
        assert post(client, sub["id"], "pause").json()["status"] == "paused"
        return sub
    if state == "charging":
        sub = create(client)
        assert post(client, sub["id"], "charge-now").status_code == 202
        return sub
    if state == "past_due":
        sub = create(client, MEHMET)  # default card: tok_test_renewal_fails
        assert post(client, sub["id"], "charge-now").status_code == 202
        tick(client)
        assert get(client, sub["id"])["status"] == "past_due"
        return sub
    if state == "cancelled":
        sub = create(client)
        assert post(client, sub["id"], "cancel", {"atPeriodEnd": False}).status_code == 200
        return sub
    raise AssertionError(state)


def act(
    client: httpx2.Client, anon: httpx2.Client, sub: dict[str, Any], action: str, condition: str
) -> httpx2.Response:
    """Perform a table action the way its row's condition says."""
    if action == "public_cancel":
        url = f"/v1/public/subscriptions/{sub['publicHash']}/cancel"
        if "default" in condition:
            return anon.post(url, json={})
        return anon.post(url, json={"atPeriodEnd": "atPeriodEnd=false" not in condition})
    if action == "cancel":
        return post(client, sub["id"], "cancel", {"atPeriodEnd": "=false" not in condition})
    return post(client, sub["id"], action.replace("_", "-"))


CALLER_ROWS = [t for t in SUBSCRIPTION.transitions if not t.automatic and t.source is not None]


@pytest.mark.parametrize(
    "row",
    CALLER_ROWS,
    ids=[f"{t.source}-{t.action}-{t.condition or 'always'}" for t in CALLER_ROWS],
)
def test_every_caller_row_of_the_table(
    client: httpx2.Client, anon: httpx2.Client, row: Any
) -> None:
    assert row.source is not None
    sub = in_state(client, row.source)
    response = act(client, anon, sub, row.action, row.condition)
    assert response.status_code in (200, 202), response.text
    assert get(client, sub["id"])["status"] == row.target


ACTIONS = ("pause", "resume", "retry", "charge_now", "cancel", "public_cancel")
FORBIDDEN = [
    (state, action)
    for state in ("active", "trialing", "paused", "charging", "past_due", "cancelled")
    for action in ACTIONS
    if not SUBSCRIPTION.allows(state, action)
]


@pytest.mark.parametrize(("state", "action"), FORBIDDEN, ids=[f"{s}-{a}" for s, a in FORBIDDEN])
def test_actions_the_table_forbids_are_409(
    client: httpx2.Client, anon: httpx2.Client, state: str, action: str
) -> None:
    sub = in_state(client, state)
    before = get(client, sub["id"])
    body = assert_envelope(act(client, anon, sub, action, ""), 409, "SVC-SUB-4090")
    assert state in body["message"]
    assert get(client, sub["id"]) == before


def test_new_without_trial_end_is_active_with_cycle_0_and_next_charge_set(
    client: httpx2.Client,
) -> None:
    sub = create(client)
    assert sub["status"] == "active"
    assert sub["cycleNumber"] == 0
    created = parse(sub["createdAt"])
    assert parse(sub["nextChargeAt"]) == after(created, "month", 1, 1)
    assert sub_events(client, sub["id"]) == ["subscription.created"]


def test_new_with_trial_end_is_trialing_until_that_date(client: httpx2.Client) -> None:
    trial_end = (now(client) + timedelta(days=10)).strftime("%Y-%m-%dT%H:%M:%SZ")
    sub = create(client, trialEndAt=trial_end)
    assert sub["status"] == "trialing"
    assert sub["nextChargeAt"] == trial_end
    advance(client, 9 * DAY)
    assert get(client, sub["id"])["status"] == "trialing"
    assert charges(client, sub["id"]) == []


def test_active_or_trialing_pause_is_paused_and_the_reconciler_ignores_it(
    client: httpx2.Client,
) -> None:
    for state in ("active", "trialing"):
        sub = in_state(client, state)
        response = post(client, sub["id"], "pause")
        assert response.json() == {"id": sub["id"], "status": "paused"}
        advance(client, 70 * DAY)
        after = get(client, sub["id"])
        assert after["status"] == "paused"
        assert after["cycleNumber"] == 0
        assert charges(client, sub["id"]) == []
        assert sub_events(client, sub["id"])[-1] == "subscription.paused"


def test_paused_resume_is_active_and_the_next_tick_charges(client: httpx2.Client) -> None:
    sub = in_state(client, "paused")
    response = post(client, sub["id"], "resume")
    assert response.json() == {"id": sub["id"], "status": "active"}
    assert charges(client, sub["id"]) == []
    tick(client)
    items = charges(client, sub["id"])
    assert [(i["cycleNumber"], i["status"]) for i in items] == [(1, "captured")]
    assert get(client, sub["id"])["cycleNumber"] == 1
    assert sub_events(client, sub["id"])[-2:] == ["subscription.resumed", "subscription.renewed"]


def test_past_due_retry_stays_past_due_with_next_charge_at_now(client: httpx2.Client) -> None:
    sub = in_state(client, "past_due")
    scheduled = get(client, sub["id"])["nextChargeAt"]
    response = post(client, sub["id"], "retry")
    body = response.json()
    assert body["status"] == "past_due"
    assert body["id"] == sub["id"]
    assert parse(body["nextChargeAt"]) < parse(scheduled)
    assert abs((parse(body["nextChargeAt"]) - now(client)).total_seconds()) < 5
    tick(client)
    assert len(charges(client, sub["id"])) == 2  # the retry reached the card on the tick


@pytest.mark.parametrize("state", ["active", "trialing", "past_due"])
def test_charge_now_is_charging_while_processing_with_a_queueing_receipt(
    client: httpx2.Client, state: str
) -> None:
    sub = in_state(client, state)
    response = post(client, sub["id"], "charge-now")
    assert response.status_code == 202
    receipt = response.json()
    assert set(receipt) == {"status", "subscriptionId", "expectedAt", "checkAt"}
    assert receipt["status"] == "queuing"
    assert receipt["subscriptionId"] == sub["id"]
    assert receipt["checkAt"] == f"/v1/subscriptions/{sub['id']}"
    assert get(client, sub["id"])["status"] == "charging"
    tick(client)
    polled = client.get(receipt["checkAt"]).json()
    assert polled["status"] != "charging"
    expected = "past_due" if state == "past_due" else "active"  # MEHMET's card always fails
    assert polled["status"] == expected


def test_active_cancel_at_period_end_stays_active_with_cancel_at_period_end(
    client: httpx2.Client,
) -> None:
    sub = create(client)
    response = post(client, sub["id"], "cancel", {"atPeriodEnd": True, "reason": "moving"})
    assert response.json() == {"id": sub["id"], "status": "active", "cancelAtPeriodEnd": True}
    advance(client, 40 * DAY)
    after = get(client, sub["id"])
    assert after["status"] == "cancelled"
    assert charges(client, sub["id"]) == []  # the paid period ended; nothing charged
    assert sub_events(client, sub["id"])[-1] == "subscription.cancelled"


def test_active_cancel_immediately_is_cancelled(client: httpx2.Client) -> None:
    sub = create(client)
    response = post(client, sub["id"], "cancel", {"atPeriodEnd": False})
    assert response.json() == {"id": sub["id"], "status": "cancelled", "cancelAtPeriodEnd": False}
    assert get(client, sub["id"])["nextChargeAt"] is None
    advance(client, 40 * DAY)
    assert charges(client, sub["id"]) == []
    assert sub_events(client, sub["id"]) == ["subscription.created", "subscription.cancelled"]


def test_active_public_cancel_defaults_to_at_period_end(
    client: httpx2.Client, anon: httpx2.Client
) -> None:
    sub = create(client, AYSE)
    response = anon.post(f"/v1/public/subscriptions/{sub['publicHash']}/cancel")
    assert response.status_code == 200
    assert response.json() == {
        "publicHash": sub["publicHash"],
        "status": "active",
        "cancelAtPeriodEnd": True,
    }


def test_cancel_requires_at_period_end(client: httpx2.Client) -> None:
    sub = create(client)
    body = assert_envelope(post(client, sub["id"], "cancel", {}), 400, "SVC-VAL-4001")
    assert "atPeriodEnd" in body["message"]
