"""The reconciler's subscription work on the business clock: renewals, failures, trials."""

from __future__ import annotations

from datetime import timedelta

import httpx2

from tests.sandbox.subscriptions.api import AYSE, MEHMET, charges, create, get, post, sub_events
from tests.sandbox.subscriptions.clock import advance, advance_to, now, parse, tick
from workbench.sandbox import SandboxServer
from workbench.sandbox.subscriptions import RETRY_OFFSETS, after, replace_card

DAY = 86_400


def stamp(moment: object) -> str:
    assert hasattr(moment, "strftime")
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def test_a_year_of_monthly_renewals_in_one_advance_is_twelve_in_order(
    client: httpx2.Client,
) -> None:
    sub = create(client)
    created = parse(sub["createdAt"])
    advance(client, 365 * DAY)
    items = charges(client, sub["id"])
    assert [i["cycleNumber"] for i in items] == list(range(1, 13))
    assert all(i["status"] == "captured" and i["amountMinor"] == 9_990 for i in items)
    assert [parse(i["chargedAt"]) for i in items] == [
        after(created, "month", 1, n) for n in range(1, 13)
    ]
    assert len({i["paymentId"] for i in items}) == 12
    after_year = get(client, sub["id"])
    assert after_year["cycleNumber"] == 12
    assert parse(after_year["nextChargeAt"]) == after(created, "month", 1, 13)
    events = client.get("/sandbox/events", params={"type": "subscription.renewed"}).json()
    renewed = [e["data"] for e in events["items"] if e["data"]["subscriptionId"] == sub["id"]]
    assert [e["cycleNumber"] for e in renewed] == list(range(1, 13))
    assert [e["paymentId"] for e in renewed] == [i["paymentId"] for i in items]
    payment = client.get(f"/v1/payments/{items[0]['paymentId']}").json()
    assert payment["status"] == "captured"
    assert payment["amount"] == 9_990


def test_weekly_daily_and_yearly_intervals_are_exact(client: httpx2.Client) -> None:
    subs = {
        unit: create(client, intervalUnit=unit, intervalCount=count)
        for unit, count in (("day", 10), ("week", 2), ("year", 1))
    }
    advance(client, 366 * DAY + 60)
    counts = {unit: len(charges(client, s["id"])) for unit, s in subs.items()}
    assert counts == {"day": 36, "week": 26, "year": 1}
    for unit, count in (("day", 10), ("week", 2)):
        created = parse(subs[unit]["createdAt"])
        stamps = [parse(i["chargedAt"]) for i in charges(client, subs[unit]["id"])]
        assert stamps[:3] == [after(created, unit, count, n) for n in (1, 2, 3)]


def test_failing_card_goes_past_due_retries_on_schedule_then_expires(
    client: httpx2.Client,
) -> None:
    sub = create(client, MEHMET)  # tok_test_renewal_fails
    first_due = parse(sub["nextChargeAt"])
    advance_to(client, first_due)
    state = get(client, sub["id"])
    assert state["status"] == "past_due"
    assert state["cycleNumber"] == 0
    assert parse(state["nextChargeAt"]) == first_due + RETRY_OFFSETS[0]
    advance(client, 6 * DAY)
    items = charges(client, sub["id"])
    assert [parse(i["chargedAt"]) for i in items] == [first_due] + [
        first_due + offset for offset in RETRY_OFFSETS
    ]
    assert {(i["cycleNumber"], i["status"]) for i in items} == {(1, "declined")}
    final = get(client, sub["id"])
    assert final["status"] == "expired"
    assert final["nextChargeAt"] is None
    assert sub_events(client, sub["id"]) == [
        "subscription.created",
        "subscription.renewal_failed",
        "subscription.past_due",
        "subscription.renewal_failed",
        "subscription.renewal_failed",
        "subscription.renewal_failed",
        "subscription.expired",
    ]
    advance(client, 60 * DAY)
    assert len(charges(client, sub["id"])) == 4  # expired: never charged again


def test_manual_retry_after_the_card_is_replaced_recovers(
    client: httpx2.Client, server: SandboxServer
) -> None:
    sub = create(client, MEHMET)
    advance_to(client, parse(sub["nextChargeAt"]))
    assert get(client, sub["id"])["status"] == "past_due"
    post(client, sub["id"], "retry")
    tick(client)
    assert get(client, sub["id"])["status"] == "past_due"  # same card, fails again
    with server.sandbox.db.write() as conn:  # what the hosted card-update page calls
        replace_card(conn, sub["id"], "tok_test_success")
    state = get(client, sub["id"])
    assert state["cardLast4"] == "4242"
    tick(client)
    recovered = get(client, sub["id"])
    assert recovered["status"] == "active"
    assert recovered["cycleNumber"] == 1
    assert [i["status"] for i in charges(client, sub["id"])] == [
        "declined",
        "declined",
        "captured",
    ]
    events = sub_events(client, sub["id"])
    assert "subscription.card_updated" in events
    assert events[-1] == "subscription.renewed"


def test_trial_end_with_a_working_card_charges_and_activates(client: httpx2.Client) -> None:
    trial_end = now(client).replace(microsecond=0) + timedelta(days=7)
    sub = create(client, AYSE, trialEndAt=stamp(trial_end))
    advance(client, 5 * DAY)
    assert sub_events(client, sub["id"]) == [
        "subscription.created",
        "subscription.trial_will_end",
    ]
    advance(client, 2 * DAY + 60)
    state = get(client, sub["id"])
    assert state["status"] == "active"
    assert state["cycleNumber"] == 1
    assert parse(state["nextChargeAt"]) == after(trial_end, "month", 1, 1)
    assert [parse(i["chargedAt"]) for i in charges(client, sub["id"])] == [trial_end]


def test_trial_end_without_a_working_card_is_past_due(client: httpx2.Client) -> None:
    trial_end = now(client).replace(microsecond=0) + timedelta(days=2)
    sub = create(client, MEHMET, trialEndAt=stamp(trial_end))
    advance(client, 2 * DAY + 60)
    state = get(client, sub["id"])
    assert state["status"] == "past_due"
    assert state["cycleNumber"] == 0
    assert parse(state["nextChargeAt"]) == trial_end + RETRY_OFFSETS[0]
    assert sub_events(client, sub["id"])[-2:] == [
        "subscription.renewal_failed",
        "subscription.past_due",
    ]


def test_trial_cancelled_at_period_end_is_never_charged(client: httpx2.Client) -> None:
    sub = create(client, AYSE, trialEndAt=stamp(now(client) + timedelta(days=3)))
    post(client, sub["id"], "cancel", {"atPeriodEnd": True})
    advance(client, 40 * DAY)
    assert get(client, sub["id"])["status"] == "cancelled"
    assert charges(client, sub["id"]) == []


def test_charge_now_starts_a_new_period_from_the_charge(client: httpx2.Client) -> None:
    sub = create(client)
    advance(client, 10 * DAY)
    post(client, sub["id"], "charge-now")
    tick(client)
    state = get(client, sub["id"])
    charged = parse(charges(client, sub["id"])[0]["chargedAt"])
    assert state["cycleNumber"] == 1
    assert parse(state["nextChargeAt"]) == after(charged, "month", 1, 1)
