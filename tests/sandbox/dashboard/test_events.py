"""Events and webhook deliveries: attempts with the receiver's answer, resend, settings."""

from __future__ import annotations

import html
import re
import uuid

import httpx2

from tests.sandbox.bodies import charge_under, txn
from tests.sandbox.dashboard.pages import Merchant, form_token
from tests.sandbox.dashboard.receiver import Receiver, receiving


def _event_of_a_charge(api: httpx2.Client, page: httpx2.Client) -> str:
    assert api.post("/v1/payments/card", json=charge_under(txn(), 10_000)).status_code == 201
    found = re.findall(r'href="/dashboard/events/(evt_[^"]+)"', page.get("/dashboard/events").text)
    assert found, "the charge's event is listed"
    return found[0]


def _attempt_cells(page: str) -> list[list[str]]:
    table = page[page.index('data-testid="attempts"') :]
    body = table[table.index("<tbody>") : table.index("</tbody>")]
    return [
        [
            html.unescape(re.sub(r"<[^>]+>", "", cell)).strip()
            for cell in re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)
        ]
        for row in re.findall(r"<tr>(.*?)</tr>", body, re.S)
    ]


def _failing_delivery(api: httpx2.Client, page: httpx2.Client, receiver: Receiver) -> str:
    assert api.put("/sandbox/webhook", json={"url": receiver.url}).status_code == 200
    event_id = _event_of_a_charge(api, page)
    api.post("/sandbox/reconciler/tick", json={})  # attempt 1: the receiver answers 500
    assert receiver.received == [(event_id, "1")]
    return event_id


def test_an_attempt_shows_target_status_latency_and_answer(
    api: httpx2.Client, page: httpx2.Client
) -> None:
    with receiving() as receiver:
        event_id = _failing_delivery(api, page, receiver)
        shown = page.get(f"/dashboard/events/{event_id}")
    assert shown.status_code == 200
    ((number, _at, target, status, took, answer),) = _attempt_cells(shown.text)
    assert number == "1"
    assert target == receiver.url
    assert status.startswith("500")
    assert re.fullmatch(r"\d+ ms", took)
    assert answer.startswith("receiver broken: card [card number] echoed")
    assert "4242 4242 4242 4242" not in shown.text
    assert 'data-testid="delivery-state">pending' in shown.text
    next_attempt = re.search(r'data-testid="next-attempt">([^<]+)<', shown.text)
    assert next_attempt is not None
    assert next_attempt.group(1) != "-"
    assert '"type": "payment.captured"' in html.unescape(shown.text)  # the payload


def test_resend_after_the_receiver_is_fixed_delivers_once_per_key(
    api: httpx2.Client, page: httpx2.Client
) -> None:
    with receiving() as receiver:
        event_id = _failing_delivery(api, page, receiver)
        shown = page.get(f"/dashboard/events/{event_id}")
        receiver.status, receiver.body = 200, b'{"ok": true}'
        key = re.search(r'name="idempotency_key" value="([^"]+)"', shown.text)
        assert key is not None
        form = {"csrf": form_token(shown.text), "idempotency_key": key.group(1)}
        answer = page.post(f"/dashboard/events/{event_id}/resend", data=form)
        assert answer.status_code == 303
        assert answer.headers["location"] == f"/dashboard/events/{event_id}?resent=2"
        again = page.post(f"/dashboard/events/{event_id}/resend", data=form)  # a double submit
        assert again.headers["location"] == f"/dashboard/events/{event_id}?resent=2"
        assert receiver.received == [(event_id, "1"), (event_id, "2")]
        after = page.get(answer.headers["location"])
    assert 'data-testid="delivery-state">delivered' in after.text
    assert "Attempt 2 sent." in after.text
    rows = _attempt_cells(after.text)
    assert [(r[0], r[3][:3]) for r in rows] == [("1", "500"), ("2", "200")]
    assert rows[1][5] == '{"ok": true}'
    # The control route's view agrees (what `GET /sandbox/events/{id}/deliveries` says).
    deliveries = api.get(f"/sandbox/events/{event_id}/deliveries").json()
    assert deliveries["state"] == "delivered"
    assert [a["statusCode"] for a in deliveries["attempts"]] == [500, 200]


def test_resend_without_a_webhook_url_says_so(api: httpx2.Client, page: httpx2.Client) -> None:
    event_id = _event_of_a_charge(api, page)
    shown = page.get(f"/dashboard/events/{event_id}")
    form = {"csrf": form_token(shown.text), "idempotency_key": str(uuid.uuid4())}
    answer = page.post(f"/dashboard/events/{event_id}/resend", data=form)
    assert answer.status_code == 409
    assert "The store has no webhook URL: set one first." in answer.text
    assert "No attempt yet." in answer.text


def test_resend_of_another_merchants_event_is_not_found(
    api: httpx2.Client, page: httpx2.Client, dashboard_server: object
) -> None:
    from tests.sandbox.dashboard.pages import new_merchant, signed_in_client

    event_id = _event_of_a_charge(api, page)
    base = dashboard_server.base_url  # type: ignore[attr-defined]
    with signed_in_client(base, new_merchant(base)) as stranger:
        token = form_token(stranger.get("/dashboard").text)
        form = {"csrf": token, "idempotency_key": str(uuid.uuid4())}
        answer = stranger.post(f"/dashboard/events/{event_id}/resend", data=form)
    assert answer.status_code == 404
    assert "payment.captured" not in answer.text


def test_a_malformed_key_is_refused_before_anything_is_sent(
    api: httpx2.Client, page: httpx2.Client
) -> None:
    with receiving() as receiver:
        event_id = _failing_delivery(api, page, receiver)
        shown = page.get(f"/dashboard/events/{event_id}")
        form = {"csrf": form_token(shown.text), "idempotency_key": "not-a-uuid"}
        answer = page.post(f"/dashboard/events/{event_id}/resend", data=form)
        assert answer.status_code == 400
        assert receiver.received == [(event_id, "1")]


def test_events_are_searchable_by_id_and_type(api: httpx2.Client, page: httpx2.Client) -> None:
    event_id = _event_of_a_charge(api, page)
    by_id = page.get("/dashboard/events", params={"q": event_id})
    assert re.findall(r'href="/dashboard/events/(evt_[^"]+)"', by_id.text) == [event_id]
    by_type = page.get("/dashboard/events", params={"type": "refund.settled"})
    assert "No events yet." in by_type.text


def test_the_webhook_secret_is_shown_only_when_asked(
    page: httpx2.Client, api: httpx2.Client, merchant: Merchant
) -> None:
    api.put("/sandbox/webhook", json={"url": "https://hooks.example/in"})
    shown = page.get("/dashboard/settings")
    assert "https://hooks.example/in" in shown.text
    assert merchant.webhook_secret not in shown.text
    answer = page.post("/dashboard/settings/reveal", data={"csrf": form_token(shown.text)})
    assert answer.status_code == 200
    assert f'data-testid="webhook-secret">{merchant.webhook_secret}<' in answer.text
    assert answer.headers["cache-control"] == "no-store"
    refused = page.post("/dashboard/settings/reveal", data={"csrf": "wrong"})
    assert refused.status_code == 403
    assert merchant.webhook_secret not in refused.text
