"""Events and webhooks: signed delivery, retries with backoff, the events list."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx2
import pytest

from tests.sandbox.bodies import charge_body, txn
from workbench.signing import verify


class Receiver:
    """A webhook endpoint on 127.0.0.1 that fails its first ``failures`` deliveries."""

    def __init__(self, failures: int = 0) -> None:
        self.failures = failures
        self.received: list[tuple[dict[str, str], bytes]] = []
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers["Content-Length"]))
                receiver.received.append(({k: v for k, v in self.headers.items()}, raw))
                failing = len(receiver.received) <= receiver.failures
                self.send_response(500 if failing else 204)
                self.end_headers()

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/hooks"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    r = Receiver()
    yield r
    r.close()


def _session_then_charge(client: httpx2.Client, url: str, **extra: Any) -> tuple[str, str]:
    transaction = txn()
    client.post(
        "/v1/payments/sessions",
        json={
            "transactionId": transaction,
            "amount": 10_000,
            "currency": "TRY",
            "returnUrl": "https://shop.example/r",
            "callbackUrl": url,
        },
    )
    body = {**charge_body(**extra), "transactionId": transaction}
    return transaction, str(client.post("/v1/payments/card", json=body).json()["paymentId"])


def _mine(client: httpx2.Client, payment_id: str) -> list[dict[str, Any]]:
    items = client.get("/sandbox/events").json()["items"]
    return [e for e in items if e["data"].get("paymentId") == payment_id]


def test_webhook_is_delivered_to_callback_url_with_a_valid_signature(
    client: httpx2.Client, receiver: Receiver
) -> None:
    _, pid = _session_then_charge(client, receiver.url)
    client.post("/sandbox/reconciler/tick", json={})
    assert len(receiver.received) == 1
    headers, raw = receiver.received[0]
    event = json.loads(raw)
    assert event["type"] == "payment.captured"
    assert event["data"]["paymentId"] == pid
    assert event["id"].startswith("evt_")
    secret = client.get("/sandbox/fixtures").json()["stores"][0]["webhookSecret"]
    verify(
        secret,
        signature=headers["X-Signature"],
        timestamp=headers["X-Timestamp"],
        method="POST",
        path="/hooks",
        body=raw,
    )
    [listed] = [e for e in _mine(client, pid) if e["type"] == "payment.captured"]
    assert listed["delivery"]["state"] == "delivered"
    assert listed["delivery"]["attempts"] == 1


def test_failed_delivery_is_retried_with_backoff(client: httpx2.Client) -> None:
    receiver = Receiver(failures=2)
    try:
        _, pid = _session_then_charge(client, receiver.url, capture=False)
        client.post("/sandbox/reconciler/tick", json={})
        assert len(receiver.received) == 1
        client.post("/sandbox/reconciler/tick", json={})
        assert len(receiver.received) == 1  # not due again before the backoff
        client.post("/sandbox/clock/advance", json={"seconds": 10})
        assert len(receiver.received) == 2
        client.post("/sandbox/clock/advance", json={"seconds": 60})
        assert len(receiver.received) == 3
        [event] = _mine(client, pid)
        assert event["delivery"]["state"] == "delivered"
        assert event["delivery"]["attempts"] == 3
        assert {json.loads(raw)["id"] for _, raw in receiver.received} == {event["id"]}
    finally:
        receiver.close()


def test_delivery_gives_up_after_max_attempts(client: httpx2.Client) -> None:
    receiver = Receiver(failures=100)
    try:
        _, pid = _session_then_charge(client, receiver.url, capture=False)
        client.post("/sandbox/clock/advance", json={"seconds": 4 * 3600})
        [event] = _mine(client, pid)
        assert event["delivery"]["state"] == "failed"
        attempts = [raw for _, raw in receiver.received if json.loads(raw)["id"] == event["id"]]
        assert event["delivery"]["attempts"] == len(attempts) == 5
    finally:
        receiver.close()


def test_store_webhook_url_receives_events_without_a_session(
    other_client: httpx2.Client, receiver: Receiver
) -> None:
    other_client.put("/sandbox/webhook", json={"url": receiver.url})
    try:
        pid = other_client.post("/v1/payments/card", json=charge_body(capture=False)).json()[
            "paymentId"
        ]
        other_client.post(f"/v1/payments/{pid}/void", json={"reason": "out of stock"})
        other_client.post("/sandbox/reconciler/tick", json={})
        types = [json.loads(raw)["type"] for _, raw in receiver.received]
        assert types == ["payment.authorized", "payment.voided"]
        assert json.loads(receiver.received[1][1])["data"]["reason"] == "out of stock"
    finally:
        other_client.put("/sandbox/webhook", json={"url": None})


def test_a_charge_with_no_callback_and_no_store_webhook_has_no_endpoint(
    other_client: httpx2.Client,
) -> None:
    pid = other_client.post("/v1/payments/card", json=charge_body()).json()["paymentId"]
    [event] = _mine(other_client, pid)
    assert event["delivery"]["state"] == "no_endpoint"
    assert event["delivery"]["url"] is None


def test_a_sessions_callback_wins_over_the_store_webhook(
    other_client: httpx2.Client, receiver: Receiver
) -> None:
    store_hook = Receiver()
    other_client.put("/sandbox/webhook", json={"url": store_hook.url})
    try:
        _, pid = _session_then_charge(other_client, receiver.url)
        plain = other_client.post("/v1/payments/card", json=charge_body()).json()["paymentId"]
        [via_session] = _mine(other_client, pid)
        [via_store] = _mine(other_client, plain)
        assert via_session["delivery"]["url"] == receiver.url
        assert via_store["delivery"]["url"] == store_hook.url
    finally:
        other_client.put("/sandbox/webhook", json={"url": None})
        store_hook.close()


def test_events_are_listed_per_merchant(client: httpx2.Client, other_client: httpx2.Client) -> None:
    pid = client.post("/v1/payments/card", json=charge_body()).json()["paymentId"]
    assert _mine(client, pid)
    assert not _mine(other_client, pid)


def test_refund_events_follow_the_refund(client: httpx2.Client) -> None:
    pid = client.post("/v1/payments/card", json=charge_body(token="tok_test_refund_async")).json()[
        "paymentId"
    ]
    client.post(f"/v1/payments/{pid}/refund", json={})
    client.post("/sandbox/settle", json={})
    types = [e["type"] for e in _mine(client, pid)]
    assert types == ["payment.captured", "refund.pending", "refund.settled"]
