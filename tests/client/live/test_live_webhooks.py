"""Webhooks from the running sandbox reach the local listener and verify over the raw bytes."""

from __future__ import annotations

import uuid

from workbench._client import Client
from workbench.tracking import wait_until
from workbench.webhooks import WebhookListener


def test_void_event_is_delivered_and_verified(client: Client) -> None:
    secret = client.sandbox.fixtures().webhook_secret
    assert secret
    with WebhookListener(secret) as hooks:
        client.sandbox.set_webhook(hooks.url)
        auth = client.payments.charge_card(
            transaction_id=f"order-{uuid.uuid4().hex[:10]}",
            amount=4_000,
            card_token="tok_test_success",
            capture=False,
        )
        client.payments.void(auth.payment_id, reason="out of stock")
        client.sandbox.tick()
        [event] = hooks.wait_for("payment.voided", timeout=10)
        assert event.id.startswith("evt_")
        assert event.data.get("reason") == "out of stock"
        assert hooks.rejected == 0
        frame = hooks.to_frame()
        assert "payment.voided" in set(frame["type"])
        # the sandbox records the delivery after our 200; the background reconciler may be
        # the one delivering, so poll instead of assuming the tick did it
        recorded = wait_until(
            lambda: {e.id: e for e in client.sandbox.events().items},
            lambda events: events[event.id].delivery.get("state") == "delivered",
            timeout=10,
        )
        assert recorded[event.id].delivery.get("attempts") == 1
    client.sandbox.set_webhook(None)


def test_a_listener_with_the_wrong_secret_rejects_deliveries(client: Client) -> None:
    with WebhookListener("whsec_not_the_right_one") as hooks:
        client.sandbox.set_webhook(hooks.url)
        auth = client.payments.charge_card(
            transaction_id=f"order-{uuid.uuid4().hex[:10]}",
            amount=4_000,
            card_token="tok_test_success",
            capture=False,
        )
        client.payments.void(auth.payment_id)
        client.sandbox.tick()
        wait_until(lambda: hooks.rejected, lambda n: n >= 1, timeout=10)
        assert hooks.events == []
        states = {e.type: e.delivery.get("state") for e in client.sandbox.events().items}
        assert states.get("payment.voided") == "pending"
    client.sandbox.set_webhook(None)


def test_deliveries_lists_each_attempt_of_an_event(client: Client) -> None:
    secret = client.sandbox.fixtures().webhook_secret
    assert secret
    with WebhookListener(secret) as hooks:
        client.sandbox.set_webhook(hooks.url)
        paid = client.payments.charge_card(
            transaction_id=f"order-{uuid.uuid4().hex[:10]}",
            amount=4_000,
            card_token="tok_test_success",
        )
        client.sandbox.tick()
        [event] = hooks.wait_for("payment.captured", timeout=10)
        assert event.data.get("paymentId") == paid.payment_id
        record = wait_until(
            lambda: client.sandbox.deliveries(event.id),
            lambda found: found.state == "delivered",
            timeout=10,
        )
    client.sandbox.set_webhook(None)
    assert record.object == paid.payment_id
    assert [(a.attempt, a.status_code, a.error) for a in record.attempts] == [(1, 200, None)]
    assert record.next_attempt_at is None
