"""A refusal by the service's rules is kept under its Idempotency-Key, as every answer is.

The spec: "Same key and same payload: the original response is returned verbatim, with
the original HTTP status and X-Request-Id. Same key and different payload: HTTP 409
with code SVC-GW-2001." A state conflict (a refund of an authorized payment) and an
amount refusal (a refund over refundableAmount) are responses like a success: a retry
under the key answers them again even after the payment changed, and another payload
under the key is SVC-GW-2001. What was refused before the rules applied (an invalid
body, a failed signature) keeps nothing: ``test_idempotency.py``.

Checked on one sandbox per backend and on two worker processes per backend, each
request on a connection of its own so either worker may answer it.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

import httpx2
import pytest

from tests.sandbox.bodies import charge_body
from tests.sandbox.clients import signed_client
from tests.sandbox.envelope import assert_envelope
from tests.sandbox.subscriptions.api import sub_body
from workbench import Client, PaymentStateError, RefundAmountError
from workbench.sandbox import SandboxServer

#: The two-worker sandbox (the ``workers`` fixture) runs no reconciler.
RECONCILER = False

Send = Callable[..., httpx2.Response]


def _sender(base: str) -> Send:
    """Signed requests to ``base``, each on a connection of its own."""

    def one(method: str, path: str, body: Any = None, key: str | None = None) -> httpx2.Response:
        headers = {"Idempotency-Key": key} if key else {}
        with signed_client(base) as client:
            return client.request(method, path, json=body, headers=headers)

    return one


def _charge(send: Send, **extra: Any) -> str:
    response = send("POST", "/v1/payments/card", charge_body(threeDSecure=False, **extra))
    assert response.status_code == 201, response.text
    return str(response.json()["paymentId"])


def _assert_replayed(replay: httpx2.Response, original: httpx2.Response) -> None:
    assert replay.status_code == original.status_code
    assert replay.content == original.content
    assert replay.headers["X-Request-Id"] == original.headers["X-Request-Id"]
    assert replay.headers["Idempotent-Replayed"] == "true"


def _a_state_conflict_is_replayed_after_the_state_changed(base: str) -> None:
    send = _sender(base)
    # -> None:
    payment = _charge(send, capture=False)
    key = str(uuid.uuid4())
    refund = {"amount": 4_000}
    refused = send("POST", f"/v1/payments/{payment}/refund", refund, key)
    assert_envelope(refused, 409, "SVC-PAY-4090")
    captured = send("POST", f"/v1/payments/{payment}/capture", {})
    assert captured.status_code == 200, captured.text
    replay = send("POST", f"/v1/payments/{payment}/refund", refund, key)
    _assert_replayed(replay, refused)
    after = send("GET", f"/v1/payments/{payment}").json()
    assert after["refundableAmount"] == after["amount"]  # the replay moved no money
    fresh = send("POST", f"/v1/payments/{payment}/refund", refund, str(uuid.uuid4()))
    assert fresh.status_code in (200, 202), fresh.text  # a new key is a new request


def _an_amount_refusal_is_replayed_and_another_amount_is_2001(base: str) -> None:
    send = _sender(base)
    # -> None:
    payment = _charge(send, amount=10_000)
    key = str(uuid.uuid4())
    refused = send("POST", f"/v1/payments/{payment}/refund", {"amount": 10_001}, key)
    assert_envelope(refused, 400, "SVC-PAY-4002")
    smaller = send("POST", f"/v1/payments/{payment}/refund", {"amount": 5_000}, key)
    assert_envelope(smaller, 409, "SVC-GW-2001")
    replay = send("POST", f"/v1/payments/{payment}/refund", {"amount": 10_001}, key)
    _assert_replayed(replay, refused)
    assert send("GET", f"/v1/payments/{payment}").json()["refundableAmount"] == 10_000


def _a_refusal_before_the_rules_keeps_nothing_under_the_key(base: str) -> None:
    send = _sender(base)
    # -> None:
    payment = _charge(send, amount=10_000)
    key = str(uuid.uuid4())
    invalid = send("POST", f"/v1/payments/{payment}/refund", {"amount": "lots"}, key)
    assert_envelope(invalid, 400, "SVC-VAL-4001")
    missing = send("POST", "/v1/payments/pay_nosuchpayment/refund", {"amount": 100}, key)
    assert_envelope(missing, 404, "SVC-GW-4004")
    corrected = send("POST", f"/v1/payments/{payment}/refund", {"amount": 5_000}, key)
    assert corrected.status_code in (200, 202), corrected.text


def _a_refusal_that_asks_for_a_retry_is_not_kept(base: str) -> None:
    send = _sender(base)
    created = send("POST", "/v1/subscriptions", sub_body())
    assert created.status_code == 201, created.text
    sub = created.json()["id"]
    assert send("POST", f"/v1/subscriptions/{sub}/charge-now", {}).status_code == 202
    key = str(uuid.uuid4())
    cancel = {"atPeriodEnd": False}
    busy = send("POST", f"/v1/subscriptions/{sub}/cancel", cancel, key)
    assert_envelope(busy, 409, "SVC-SUB-4090")
    assert busy.headers["Retry-After"] == "1"
    assert send("POST", "/sandbox/reconciler/tick", {}).status_code == 200
    retried = send("POST", f"/v1/subscriptions/{sub}/cancel", cancel, key)
    assert retried.status_code == 200, retried.text
    assert retried.json()["status"] == "cancelled"


def _the_client_raises_the_same_typed_error_for_a_replayed_refusal(base: str) -> None:
    key = str(uuid.uuid4())
    with Client(base_url=base) as client:
        charge = client.payments.charge_card(
            transaction_id=f"txn_{uuid.uuid4().hex}",
            amount=10_000,
            card_token="tok_test_success",
            three_d_secure=False,
            capture=False,
        )
        with pytest.raises(PaymentStateError) as first:
            client.payments.refund(charge.payment_id, amount=1_000, idempotency_key=key)
        client.payments.capture(charge.payment_id)
        with pytest.raises(PaymentStateError) as again:
            client.payments.refund(charge.payment_id, amount=1_000, idempotency_key=key)
        assert again.value.request_id == first.value.request_id
        assert again.value.message == first.value.message
        over = str(uuid.uuid4())
        with pytest.raises(RefundAmountError) as refused:
            client.payments.refund(charge.payment_id, amount=10_001, idempotency_key=over)
        with pytest.raises(RefundAmountError) as replayed:
            client.payments.refund(charge.payment_id, amount=10_001, idempotency_key=over)
        assert replayed.value.request_id == refused.value.request_id


CHECKS = pytest.mark.parametrize(
    "check",
    [
        _a_state_conflict_is_replayed_after_the_state_changed,
        _an_amount_refusal_is_replayed_and_another_amount_is_2001,
        _a_refusal_before_the_rules_keeps_nothing_under_the_key,
        _a_refusal_that_asks_for_a_retry_is_not_kept,
        _the_client_raises_the_same_typed_error_for_a_replayed_refusal,
    ],
    ids=lambda check: check.__name__.strip("_"),
)


@CHECKS
def test_on_one_sandbox(server: SandboxServer, check: Callable[[str], None]) -> None:
    check(server.base_url)


@CHECKS
def test_on_two_workers(workers: tuple[str, str, int], check: Callable[[str], None]) -> None:
    check(workers[0])
