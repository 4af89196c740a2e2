"""The objects' pages: lists searchable by id and transactionId, timelines, links, 404s."""

from __future__ import annotations

import re

import httpx2
import pytest

from tests.sandbox.bodies import charge_under, session_body, txn
from tests.sandbox.dashboard.pages import Merchant, new_merchant, signed_in_client
from workbench.sandbox import SandboxServer


def _charge(api: httpx2.Client, amount: int = 12_345, transaction_id: str | None = None) -> dict:
    body = charge_under(transaction_id or txn(), amount)
    answer = api.post("/v1/payments/card", json=body)
    assert answer.status_code in (200, 201), answer.text
    return {**answer.json(), "transactionId": body["transactionId"]}


def _ids(html: str, kind: str) -> list[str]:
    return re.findall(rf'href="/dashboard/{kind}/([^"]+)"', html)


def test_a_payment_is_listed_found_by_id_and_transaction_id(
    page: httpx2.Client, api: httpx2.Client
) -> None:
    first, second = _charge(api), _charge(api)
    listed = page.get("/dashboard/payments")
    assert listed.status_code == 200
    assert _ids(listed.text, "payments")[:2] == [second["paymentId"], first["paymentId"]]
    by_txn = page.get("/dashboard/payments", params={"q": first["transactionId"]})
    assert _ids(by_txn.text, "payments") == [first["paymentId"]]
    by_id = page.get("/dashboard/payments", params={"q": second["paymentId"]})
    assert _ids(by_id.text, "payments") == [second["paymentId"]]
    by_start = page.get("/dashboard/payments", params={"q": first["transactionId"][:-4]})
    assert _ids(by_start.text, "payments") == [first["paymentId"]]
    nothing = page.get("/dashboard/payments", params={"q": "txn_%"})  # no LIKE wildcard
    assert _ids(nothing.text, "payments") == []
    assert "Nothing matches." in nothing.text


def test_a_payments_page_shows_its_timeline_events_and_refunds(
    page: httpx2.Client, api: httpx2.Client
) -> None:
    paid = _charge(api, 20_000)
    refund = api.post(f"/v1/payments/{paid['paymentId']}/refund", json={"amount": 5_000})
    assert refund.status_code in (200, 202), refund.text
    refund_id = refund.json()["lastRefund"]["refundId"]
    shown = page.get(f"/dashboard/payments/{paid['paymentId']}")
    assert shown.status_code == 200
    text = shown.text
    assert paid["transactionId"] in text
    assert "TRY 200.00" in text  # the amount, in English (Babel's CLDR form)
    timeline = text[text.index('data-testid="timeline"') :]
    assert timeline.index("created") < timeline.index("payment.captured")
    assert "Derived from the object" in text
    assert f'href="/dashboard/refunds/{refund_id}"' in text
    refund_page = page.get(f"/dashboard/refunds/{refund_id}")
    assert refund_page.status_code == 200
    assert f'href="/dashboard/payments/{paid["paymentId"]}"' in refund_page.text
    # The event behind each step links to its page.
    event_ids = re.findall(r'href="/dashboard/events/(evt_[^"]+)"', timeline)
    assert event_ids
    assert page.get(f"/dashboard/events/{event_ids[0]}").status_code == 200


def test_a_session_links_to_its_payment(page: httpx2.Client, api: httpx2.Client) -> None:
    transaction_id = txn()
    made = api.post("/v1/payments/sessions", json=session_body(transaction_id, 15_000))
    assert made.status_code == 201, made.text
    session_id = made.json()["sessionId"]
    paid = _charge(api, 15_000, transaction_id)
    listed = page.get("/dashboard/sessions", params={"q": transaction_id})
    assert _ids(listed.text, "sessions") == [session_id]
    shown = page.get(f"/dashboard/sessions/{session_id}")
    assert shown.status_code == 200
    assert f'href="/dashboard/payments/{paid["paymentId"]}"' in shown.text
    payment = page.get(f"/dashboard/payments/{paid['paymentId']}")
    assert f'href="/dashboard/sessions/{session_id}"' in payment.text


def test_a_subscription_links_to_its_payments_and_events(
    page: httpx2.Client, api: httpx2.Client, merchant: Merchant
) -> None:
    customer = next(c for c in merchant.customers if c.endswith("_ayse"))
    made = api.post(
        "/v1/subscriptions",
        json={
            "storeId": merchant.store_id,
            "customerId": customer,
            "amountMinor": 9_990,
            "currency": "TRY",
            "intervalCount": 1,
            "intervalUnit": "month",
        },
    )
    assert made.status_code == 201, made.text
    sub_id = made.json()["id"]
    api.post("/sandbox/clock/advance", json={"seconds": 32 * 86_400})  # its first charge
    listed = page.get("/dashboard/subscriptions", params={"q": sub_id})
    assert _ids(listed.text, "subscriptions") == [sub_id]
    shown = page.get(f"/dashboard/subscriptions/{sub_id}")
    assert shown.status_code == 200
    payments = _ids(shown.text, "payments")
    assert len(payments) == 1, "the month's charge is linked"
    assert "subscription.renewed" in shown.text
    assert "subscription.created" in shown.text
    by_payment = page.get("/dashboard/subscriptions", params={"q": payments[0]})
    assert _ids(by_payment.text, "subscriptions") == [sub_id]
    payment = page.get(f"/dashboard/payments/{payments[0]}")
    assert f'href="/dashboard/subscriptions/{sub_id}"' in payment.text
    assert "publicHash" not in shown.text


@pytest.mark.parametrize("kind", ["payments", "sessions", "refunds", "subscriptions", "events"])
def test_another_merchants_object_is_not_found(
    dashboard_server: SandboxServer, api: httpx2.Client, kind: str
) -> None:
    paid = _charge(api)
    refund = api.post(f"/v1/payments/{paid['paymentId']}/refund", json={})
    session = api.post("/v1/payments/sessions", json=session_body(txn(), 10_000)).json()
    with dashboard_server.sandbox.db.read() as conn:
        from workbench.sandbox.dashboard.views import recent_events

        merchant_id = paid.get("merchantId") or _merchant_of(api)
        event_id = recent_events(conn, merchant_id, 1)[0].id
    ids = {
        "payments": paid["paymentId"],
        "sessions": session["sessionId"],
        "refunds": refund.json()["lastRefund"]["refundId"],
        "subscriptions": "sub_nobody",
        "events": event_id,
    }
    other = new_merchant(dashboard_server.base_url)
    with signed_in_client(dashboard_server.base_url, other) as stranger:
        answer = stranger.get(f"/dashboard/{kind}/{ids[kind]}")
        assert answer.status_code == 404
        assert ids[kind] not in answer.text
        assert paid["transactionId"] not in answer.text
        listed = stranger.get(f"/dashboard/{kind}")
        assert ids[kind] not in listed.text


def _merchant_of(api: httpx2.Client) -> str:
    return str(api.get("/sandbox/fixtures").json()["merchant"]["id"])
