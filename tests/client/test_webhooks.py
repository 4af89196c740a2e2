"""The webhook listener verifies the sandbox's signature over the raw bytes it received."""

from __future__ import annotations

import json

import httpx
import pytest

from workbench.signing import format_timestamp, sign_request
from workbench.webhooks import WebhookListener

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
    response = httpx.post(
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
        assert httpx.post(hooks.url, json=EVENT).status_code == 401
        other = hooks.url.replace("/webhooks", "/elsewhere")
        assert _deliver(other, EVENT) == 404
        assert hooks.events == []


def test_stopped_listener_frees_its_port_and_has_no_url() -> None:
    hooks = WebhookListener(SECRET).start()
    url = hooks.url
    hooks.stop()
    with pytest.raises(RuntimeError):
        _ = hooks.url
    with pytest.raises(httpx.ConnectError):
        httpx.post(url, json=EVENT)
    assert "secret" not in repr(hooks).lower() or SECRET not in repr(hooks)
    assert SECRET not in repr(hooks)
