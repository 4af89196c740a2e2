"""The clock page: the merchant's business time, moved an hour, a day, a month, or to a time."""

from __future__ import annotations

import re
from datetime import datetime, timedelta

import httpx2
import pytest

from tests.sandbox.dashboard.pages import Merchant
from workbench.sandbox import DEMO_MERCHANT_ID, SandboxServer
from workbench.sandbox.clock import business_now, wall_now
from workbench.sandbox.subscriptions.schedule import add_months


def _business_time(page: httpx2.Client) -> datetime:
    found = re.search(
        r'data-testid="business-time" data-iso="([^"]+)"', page.get("/dashboard/clock").text
    )
    assert found is not None
    return datetime.fromisoformat(found.group(1).replace("Z", "+00:00"))


def _form(page: httpx2.Client, step: str) -> dict[str, str]:
    text = page.get("/dashboard/clock").text
    token = re.search(r'name="csrf" value="([^"]+)"', text)
    forms = re.findall(
        r'name="idempotency_key" value="([^"]+)">\s*<input type="hidden" name="step" value="(\w+)"',
        text,
    )
    assert token is not None
    key = dict((s, k) for k, s in forms)[step]
    return {"csrf": token.group(1), "idempotency_key": key, "step": step}


@pytest.mark.parametrize("step", ["hour", "day", "month"])
def test_a_button_moves_the_clock_by_its_step(page: httpx2.Client, step: str) -> None:
    before = _business_time(page)
    answer = page.post("/dashboard/clock/advance", data=_form(page, step))
    assert answer.status_code == 200
    after = _business_time(page)
    expected = {
        "hour": before + timedelta(hours=1),
        "day": before + timedelta(days=1),
        "month": add_months(before, 1),
    }[step]
    assert abs((after - expected).total_seconds()) < 5  # the business clock runs on between reads
    assert 'data-testid="moved"' in answer.text


def test_the_same_form_posted_twice_moves_the_clock_once(page: httpx2.Client) -> None:
    before = _business_time(page)
    form = _form(page, "day")
    assert page.post("/dashboard/clock/advance", data=form).status_code == 200
    assert page.post("/dashboard/clock/advance", data=form).status_code == 200
    assert abs((_business_time(page) - before - timedelta(days=1)).total_seconds()) < 5


def test_moving_to_a_time_shows_what_fell_due(
    page: httpx2.Client, api: httpx2.Client, merchant: Merchant
) -> None:
    customer = next(c for c in merchant.customers if c.endswith("_ayse"))
    made = api.post(
        "/v1/subscriptions",
        json={
            "storeId": merchant.store_id,
            "customerId": customer,
            "amountMinor": 5_000,
            "currency": "TRY",
            "intervalCount": 1,
            "intervalUnit": "week",
        },
    )
    assert made.status_code == 201, made.text
    target = _business_time(page) + timedelta(days=8)
    form = {**_form(page, "until"), "until": target.strftime("%Y-%m-%dT%H:%M")}
    answer = page.post("/dashboard/clock/advance", data=form)
    assert answer.status_code == 200
    fell_due = answer.text[answer.text.index('data-testid="fell-due"') :]
    assert "subscription.renewed" in fell_due
    assert "payment.captured" in fell_due


def test_the_clock_never_moves_back(page: httpx2.Client) -> None:
    before = _business_time(page)
    earlier = (before - timedelta(days=1)).strftime("%Y-%m-%dT%H:%M")
    answer = page.post("/dashboard/clock/advance", data={**_form(page, "until"), "until": earlier})
    assert answer.status_code == 400
    assert "The clock only moves forward" in answer.text
    garbage = page.post("/dashboard/clock/advance", data={**_form(page, "until"), "until": "soon"})
    assert garbage.status_code == 400
    assert "That is not a date and time." in garbage.text
    assert abs((_business_time(page) - before).total_seconds()) < 5


def test_the_clock_is_the_merchants_own(
    page: httpx2.Client, dashboard_server: SandboxServer
) -> None:
    page.post("/dashboard/clock/advance", data=_form(page, "day"))
    assert _business_time(page) > wall_now() + timedelta(hours=23)
    with dashboard_server.sandbox.db.read() as conn:
        demo = business_now(conn, DEMO_MERCHANT_ID)
    assert demo < wall_now() + timedelta(hours=1)
