"""Every endpoint: method, path, body, signing and the typed result it returns."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from tests.client import samples
from tests.client.conftest import SECRET_KEY, FakeTime, Script, make_async_client, ok
from workbench import models
from workbench._client import AsyncClient, Client
from workbench.signing import parse_timestamp, verify

Case = tuple[
    str,  # id
    Callable[[Any], Any],  # call on a client's namespaces (sync or async alike)
    str,  # method
    str,  # path
    dict[str, Any] | None,  # JSON body sent
    bool,  # signed
    dict[str, Any],  # reply
    type,  # result model
]

CASES: list[Case] = [
    (
        "sandbox.fixtures",
        lambda c: c.sandbox.fixtures(),
        "GET",
        "/sandbox/fixtures",
        None,
        True,
        samples.FIXTURES,
        models.SandboxFixtures,
    ),
    (
        "sandbox.advance_clock",
        lambda c: c.sandbox.advance_clock(3600),
        "POST",
        "/sandbox/clock/advance",
        {"seconds": 3600},
        True,
        {"businessTime": samples.TS},
        models.BusinessTime,
    ),
    (
        "sandbox.tick",
        lambda c: c.sandbox.tick(),
        "POST",
        "/sandbox/reconciler/tick",
        {},
        True,
        {"processed": {"refunds": 1}},
        models.ReconcilerPass,
    ),
    (
        "sandbox.settle",
        lambda c: c.sandbox.settle(),
        "POST",
        "/sandbox/settle",
        {},
        True,
        {"settled": 2},
        models.SettleResult,
    ),
    (
        "sandbox.reset",
        lambda c: c.sandbox.reset(),
        "POST",
        "/sandbox/reset",
        {},
        True,
        {"deleted": {"payments": 3}},
        models.ResetResult,
    ),
    (
        "sandbox.events",
        lambda c: c.sandbox.events(),
        "GET",
        "/sandbox/events",
        None,
        True,
        samples.EVENTS,
        models.SandboxEventList,
    ),
    (
        "sandbox.fail_next",
        lambda c: c.sandbox.fail_next("timeout", seconds=2),
        "POST",
        "/sandbox/fail-next",
        {"mode": "timeout", "seconds": 2},
        True,
        {"failNext": "timeout"},
        models.FailNext,
    ),
    (
        "sandbox.set_latency",
        lambda c: c.sandbox.set_latency(50),
        "POST",
        "/sandbox/latency",
        {"milliseconds": 50},
        True,
        {"latencyMs": 50},
        models.Latency,
    ),
    (
        "sandbox.set_rate_limit",
        lambda c: c.sandbox.set_rate_limit(5.0, burst=2),
        "POST",
        "/sandbox/rate-limit",
        {"perSecond": 5.0, "burst": 2},
        True,
        {"perSecond": 5.0, "burst": 2},
        models.RateLimit,
    ),
    (
        "sandbox.set_webhook",
        lambda c: c.sandbox.set_webhook("http://127.0.0.1:9/h"),
        "PUT",
        "/sandbox/webhook",
        {"url": "http://127.0.0.1:9/h"},
        True,
        {"url": "http://127.0.0.1:9/h"},
        models.WebhookTarget,
    ),
    (
        "sandbox.answer_challenge",
        lambda c: c.sandbox.answer_challenge("pay_1", "cor_1"),
        "POST",
        "/sandbox/acs/pay_1",
        {"correlationId": "cor_1", "code": "123456"},
        False,
        samples.CHALLENGE,
        models.ChallengeAnswer,
    ),
    (
        "cards.tokenize",
        lambda c: c.cards.tokenize(
            card_number="4543 6000 0000 0001", expiry_month=12, expiry_year=2030, cvc="123"
        ),
        "POST",
        "/v1/cards/tokens",
        {"cardNumber": "4543600000000001", "expiryMonth": 12, "expiryYear": 2030, "cvc": "123"},
        True,
        samples.CARD_TOKEN,
        models.CardToken,
    ),
    (
        "sessions.create",
        lambda c: c.sessions.create(
            transaction_id="order-1",
            return_url="https://shop.test/done",
            amount=12500,
            description="Kahve",
            installment_enabled=True,
        ),
        "POST",
        "/v1/payments/sessions",
        {
            "transactionId": "order-1",
            "amount": 12500,
            "currency": "TRY",
            "description": "Kahve",
            "returnUrl": "https://shop.test/done",
            "installmentEnabled": True,
        },
        True,
        samples.SESSION,
        models.CheckoutSession,
    ),
    (
        "payments.charge_card",
        lambda c: c.payments.charge_card(
            transaction_id="order-1",
            amount=12500,
            card_token="tok_test_success",
            installment_count=3,
            capture=False,
        ),
        "POST",
        "/v1/payments/card",
        {
            "transactionId": "order-1",
            "amount": 12500,
            "currency": "TRY",
            "cardToken": "tok_test_success",
            "installmentCount": 3,
            "capture": False,
        },
        True,
        samples.CHARGE,
        models.CardCharge,
    ),
    (
        "payments.complete_3ds",
        lambda c: c.payments.complete_3ds("pay_1", pares="PARES", correlation_id="cor_1"),
        "POST",
        "/v1/payments/pay_1/3ds-callback",
        {"pares": "PARES", "correlationId": "cor_1"},
        True,
        samples.THREE_DS,
        models.ThreeDSecureResult,
    ),
    (
        "payments.capture",
        lambda c: c.payments.capture("pay_1"),
        "POST",
        "/v1/payments/pay_1/capture",
        {},
        True,
        samples.CAPTURE,
        models.CaptureResult,
    ),
    (
        "payments.void",
        lambda c: c.payments.void("pay_1", reason="customer asked"),
        "POST",
        "/v1/payments/pay_1/void",
        {"reason": "customer asked"},
        True,
        samples.VOID,
        models.VoidResult,
    ),
    (
        "payments.refund",
        lambda c: c.payments.refund("pay_1", amount=2500),
        "POST",
        "/v1/payments/pay_1/refund",
        {"amount": 2500},
        True,
        samples.REFUND,
        models.RefundResult,
    ),
    (
        "payments.retrieve",
        lambda c: c.payments.retrieve("pay_1"),
        "GET",
        "/v1/payments/pay_1",
        None,
        True,
        samples.PAYMENT,
        models.Payment,
    ),
    (
        "payments.public_status",
        lambda c: c.payments.public_status("pay_1"),
        "GET",
        "/v1/payments/pay_1/public-status",
        None,
        False,
        samples.PUBLIC_STATUS,
        models.PublicPaymentStatus,
    ),
    (
        "subscriptions.create",
        lambda c: c.subscriptions.create(
            store_id="sto_1",
            customer_id="cus_1",
            amount_minor=9900,
            interval_count=1,
            interval_unit="month",
            card_token="tok_test_success",
            trial_end_at="2026-04-01T00:00:00Z",
        ),
        "POST",
        "/v1/subscriptions",
        {
            "storeId": "sto_1",
            "customerId": "cus_1",
            "amountMinor": 9900,
            "currency": "TRY",
            "intervalCount": 1,
            "intervalUnit": "month",
            "cardToken": "tok_test_success",
            "trialEndAt": "2026-04-01T00:00:00Z",
        },
        True,
        samples.SUBSCRIPTION,
        models.Subscription,
    ),
    (
        "subscriptions.retrieve",
        lambda c: c.subscriptions.retrieve("sub_1"),
        "GET",
        "/v1/subscriptions/sub_1",
        None,
        True,
        samples.SUBSCRIPTION,
        models.Subscription,
    ),
    (
        "subscriptions.charges",
        lambda c: c.subscriptions.charges("sub_1"),
        "GET",
        "/v1/subscriptions/sub_1/charges",
        None,
        True,
        samples.CHARGES,
        models.SubscriptionChargeList,
    ),
    (
        "subscriptions.cancel",
        lambda c: c.subscriptions.cancel("sub_1", at_period_end=True, reason="moving"),
        "POST",
        "/v1/subscriptions/sub_1/cancel",
        {"atPeriodEnd": True, "reason": "moving"},
        True,
        samples.CANCEL,
        models.SubscriptionCancellation,
    ),
    (
        "subscriptions.pause",
        lambda c: c.subscriptions.pause("sub_1"),
        "POST",
        "/v1/subscriptions/sub_1/pause",
        {},
        True,
        samples.UPDATE,
        models.SubscriptionUpdate,
    ),
    (
        "subscriptions.resume",
        lambda c: c.subscriptions.resume("sub_1"),
        "POST",
        "/v1/subscriptions/sub_1/resume",
        {},
        True,
        samples.UPDATE,
        models.SubscriptionUpdate,
    ),
    (
        "subscriptions.retry",
        lambda c: c.subscriptions.retry("sub_1"),
        "POST",
        "/v1/subscriptions/sub_1/retry",
        {},
        True,
        samples.RETRY,
        models.SubscriptionUpdate,
    ),
    (
        "subscriptions.charge_now",
        lambda c: c.subscriptions.charge_now("sub_1"),
        "POST",
        "/v1/subscriptions/sub_1/charge-now",
        {},
        True,
        samples.RECEIPT,
        models.ChargeReceipt,
    ),
    (
        "portal.retrieve",
        lambda c: c.portal.retrieve("ph_abc"),
        "GET",
        "/v1/public/subscriptions/ph_abc",
        None,
        False,
        samples.PUBLIC_SUB,
        models.PublicSubscription,
    ),
    (
        "portal.cancel",
        lambda c: c.portal.cancel("ph_abc"),
        "POST",
        "/v1/public/subscriptions/ph_abc/cancel",
        {},
        False,
        samples.PUBLIC_CANCEL,
        models.PublicCancellation,
    ),
    (
        "portal.update_card_session",
        lambda c: c.portal.update_card_session("ph_abc"),
        "POST",
        "/v1/public/subscriptions/ph_abc/update-card-session",
        {},
        False,
        samples.UPDATE_CARD,
        models.UpdateCardSession,
    ),
]


def _check_request(
    request: httpx.Request, method: str, path: str, body: dict[str, Any] | None, signed: bool
) -> None:
    assert request.method == method
    assert request.url.path == path
    if body is None:
        assert request.content == b""
    else:
        assert json.loads(request.content) == body
        assert request.headers["Content-Type"] == "application/json"
    if signed:
        verify(
            SECRET_KEY,
            signature=request.headers["X-Signature"],
            timestamp=request.headers["X-Timestamp"],
            method=request.method,
            path=request.url.path,
            body=request.content,
            now=parse_timestamp(request.headers["X-Timestamp"]),
        )
    else:
        for header in ("X-Signature", "X-Api-Key", "X-Timestamp"):
            assert header not in request.headers
    assert ("Idempotency-Key" in request.headers) is (method == "POST")


@pytest.mark.parametrize(
    ("call", "method", "path", "body", "signed", "reply", "model"),
    [case[1:] for case in CASES],
    ids=[case[0] for case in CASES],
)
def test_sync_endpoint(
    client: Client,
    script: Script,
    call: Callable[[Any], Any],
    method: str,
    path: str,
    body: dict[str, Any] | None,
    signed: bool,
    reply: dict[str, Any],
    model: type,
) -> None:
    script.replies = [ok(reply, request_id="req-42")]
    result = call(client)
    assert len(script.requests) == 1
    _check_request(script.requests[0], method, path, body, signed)
    assert type(result) is model
    assert result.request_id == "req-42"
    assert result.http_status == 200
    assert result.model_dump(by_alias=True, exclude_none=True, mode="json") == reply


@pytest.mark.parametrize(
    ("call", "method", "path", "body", "signed", "reply", "model"),
    [case[1:] for case in CASES],
    ids=[case[0] for case in CASES],
)
def test_async_endpoint(
    script: Script,
    fake_time: FakeTime,
    call: Callable[[Any], Any],
    method: str,
    path: str,
    body: dict[str, Any] | None,
    signed: bool,
    reply: dict[str, Any],
    model: type,
) -> None:
    script.replies = [ok(reply)]

    async def run() -> Any:
        async with make_async_client(script, fake_time) as c:
            assert isinstance(c, AsyncClient)
            return await call(c)

    result = asyncio.run(run())
    _check_request(script.requests[0], method, path, body, signed)
    assert type(result) is model


def test_path_ids_stay_one_segment(client: Client, script: Script) -> None:
    script.replies = [ok(samples.PAYMENT)]
    client.payments.retrieve("pay_1/../../sandbox")
    assert script.requests[0].url.raw_path == b"/v1/payments/pay_1%2F..%2F..%2Fsandbox"


@pytest.mark.parametrize(
    "number", ["4543600000000001", "4543 6000 0000 0001", "4543-6000-0000-0001"]
)
def test_raw_card_numbers_never_leave(client: Client, script: Script, number: str) -> None:
    with pytest.raises(ValueError, match="raw card number") as info:
        client.payments.charge_card(transaction_id="o", amount=100, card_token=number)
    assert number not in str(info.value)
    assert script.requests == []


def test_amounts_must_be_integer_kurus(client: Client, script: Script) -> None:
    with pytest.raises(TypeError, match="kuruş"):
        client.payments.charge_card(
            transaction_id="o",
            amount=125.0,
            card_token="tok_test_success",  # type: ignore[arg-type]
        )
    with pytest.raises(TypeError):
        client.payments.refund("pay_1", amount=True)
    assert script.requests == []


def test_naive_trial_end_is_refused(client: Client) -> None:
    from datetime import datetime

    with pytest.raises(ValueError, match="aware"):
        client.subscriptions.create(
            store_id="s",
            customer_id="c",
            amount_minor=100,
            interval_count=1,
            interval_unit="day",
            trial_end_at=datetime(2026, 4, 1),
        )


def test_client_is_a_context_manager_that_closes(script: Script) -> None:
    with Client(
        "pk_test_a_0000", "sk_test_b_0000", "http://t", transport=httpx.MockTransport(script)
    ) as c:
        pass
    assert c._http.is_closed


def test_a_given_http_client_is_not_closed(script: Script) -> None:
    http = httpx.Client(transport=httpx.MockTransport(script))
    script.replies = [ok(samples.PAYMENT)]
    with Client("pk_test_a_0000", "sk_test_b_0000", "http://svc.test/base", http_client=http) as c:
        c.payments.retrieve("pay_1")
    assert not http.is_closed
    assert str(script.requests[0].url) == "http://svc.test/base/v1/payments/pay_1"
    assert script.requests[0].headers["User-Agent"].startswith("payments-workbench-python/")
    http.close()


def test_fixture_secrets_and_card_numbers_stay_out_of_repr() -> None:
    fixtures = models.SandboxFixtures.model_validate(samples.FIXTURES)
    assert fixtures.webhook_secret == "whsec_test_wb_demo_0001"
    assert "whsec_test_wb_demo_0001" not in repr(fixtures)
    assert "4543600000000001" not in repr(fixtures)
    answer = models.ChallengeAnswer.model_validate(samples.CHALLENGE)
    assert "abc.def" not in repr(answer)


def test_sandbox_events_frame(client: Client, script: Script) -> None:
    script.replies = [ok(samples.EVENTS)]
    frame = client.sandbox.events(type="payment.voided").to_frame()
    assert list(frame["type"]) == ["payment.voided"]
    assert dict(script.requests[0].url.params) == {"type": "payment.voided"}
