"""The webhook listener verifies the sandbox's signature over the raw bytes it received."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import httpx2
import pytest

from workbench.signing import format_timestamp, sign_request
from workbench.webhooks import ReceivedRequest, WebhookListener, WebhookReceiver

SECRET = "whsec_test_unit_0001"


def _deliver(
    url: str, event: dict[str, object], *, secret: str = SECRET, tamper: bool = False
) -> int:
    body = json.dumps(event, separators=(",", ":")).encode()
    signed = sign_request(
        api_key="webhook",
        secret_key=secret,
        method="POST",
        url=url,
        body=body,
        timestamp=format_timestamp(),
    )
    sent = body.replace(b"pay_1", b"pay_2") if tamper else body
    response = httpx2.post(
        url,
        content=sent,
        headers={
            "Content-Type": "application/json",
            "X-Timestamp": signed.timestamp,
            "X-Signature": signed.signature,
            "X-Event-Id": str(event["id"]),
            "X-Event-Type": str(event["type"]),
        },
    )
    return response.status_code


EVENT = {
    "id": "evt_1",
    "type": "payment.voided",
    "createdAt": "2026-03-14T09:26:53Z",
    "merchantId": "mrc_demo0001",
    "data": {"paymentId": "pay_1", "reason": "customer asked"},
}


def test_verified_events_are_kept_and_framed() -> None:
    with WebhookListener(SECRET) as hooks:
        assert hooks.url.startswith("http://127.0.0.1:")
        assert _deliver(hooks.url, EVENT) == 200
        assert _deliver(hooks.url, {**EVENT, "id": "evt_2", "type": "refund.settled"}) == 200
        voided = hooks.wait_for("payment.voided", timeout=5)
        assert [e.id for e in voided] == ["evt_1"]
        assert voided[0].data == {"paymentId": "pay_1", "reason": "customer asked"}
        frame = hooks.to_frame()
        assert list(frame["type"]) == ["payment.voided", "refund.settled"]
        assert hooks.rejected == 0


@pytest.mark.parametrize(
    ("secret", "tamper"), [("whsec_wrong", False), (SECRET, True)], ids=["wrong-secret", "tampered"]
)
def test_unverifiable_deliveries_are_refused(secret: str, tamper: bool) -> None:
    with WebhookListener(SECRET) as hooks:
        assert _deliver(hooks.url, EVENT, secret=secret, tamper=tamper) == 401
        assert hooks.events == []
        assert hooks.rejected == 1
        with pytest.raises(TimeoutError):
            hooks.wait_for(timeout=0.05)


def test_unsigned_and_wrong_path_deliveries() -> None:
    with WebhookListener(SECRET) as hooks:
        assert httpx2.post(hooks.url, json=EVENT).status_code == 401
        other = hooks.url.replace("/webhooks", "/elsewhere")
        assert _deliver(other, EVENT) == 404
        assert hooks.events == []


def test_stopped_listener_frees_its_port_and_has_no_url() -> None:
    hooks = WebhookListener(SECRET).start()
    url = hooks.url
    hooks.stop()
    with pytest.raises(RuntimeError):
        _ = hooks.url
    with pytest.raises(httpx2.ConnectError):
        httpx2.post(url, json=EVENT)
    assert "secret" not in repr(hooks).lower() or SECRET not in repr(hooks)
    assert SECRET not in repr(hooks)


def _post_signed(url: str, body: bytes, *, at: datetime | None = None) -> int:
    signed = sign_request(
        api_key="webhook",
        secret_key=SECRET,
        method="POST",
        url=url,
        body=body,
        timestamp=format_timestamp(at),
    )
    headers = {"X-Timestamp": signed.timestamp, "X-Signature": signed.signature}
    return httpx2.post(url, content=body, headers=headers).status_code


def test_a_second_delivery_of_an_event_is_acknowledged_not_kept_again() -> None:
    body = json.dumps(EVENT).encode()
    with WebhookListener(SECRET) as hooks:
        assert _post_signed(hooks.url, body) == 200
        assert _post_signed(hooks.url, body) == 200
        assert [e.id for e in hooks.events] == ["evt_1"]
        assert [d.outcome for d in hooks.deliveries] == ["verified", "duplicate"]


def test_a_stale_delivery_is_refused_with_its_reason() -> None:
    body = json.dumps(EVENT).encode()
    with WebhookListener(SECRET, tolerance=60) as hooks:
        stale = datetime.now(UTC) - timedelta(seconds=600)
        assert _post_signed(hooks.url, body, at=stale) == 401
        (delivery,) = hooks.deliveries
        assert delivery.outcome == "rejected"
        assert delivery.reason is not None
        assert "old" in delivery.reason
        assert hooks.events == []


def test_a_failed_forward_is_answered_and_its_retry_forwarded_again() -> None:
    answers = iter([503, 200])
    got: list[bytes] = []

    def merchant(request: ReceivedRequest) -> int:
        got.append(request.body)
        return next(answers)

    body = json.dumps(EVENT).encode()
    with (
        WebhookReceiver(merchant) as shop,
        WebhookListener(SECRET, forward_to=shop.url) as hooks,
    ):
        assert _post_signed(hooks.url, body) == 503
        assert _post_signed(hooks.url, body) == 200
        assert got == [body, body]
        assert [(d.outcome, d.forward_status) for d in hooks.deliveries] == [
            ("failed", 503),
            ("verified", 200),
        ]
        assert [e.id for e in hooks.events] == ["evt_1"]


def test_a_handler_that_raises_is_answered_500() -> None:
    def broken(request: ReceivedRequest) -> int:
        raise RuntimeError("boom")

    with WebhookReceiver(broken) as receiver:
        assert httpx2.post(receiver.url, content=b"{}").status_code == 500
        assert [status for _, status in receiver.received] == [500]
