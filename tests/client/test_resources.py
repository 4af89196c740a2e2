"""Every endpoint: method, path, body, signing and the typed result it returns."""

from __future__ import annotations

import asyncio
import hashlib
import inspect
import json
import uuid
from collections.abc import Callable
from typing import Any

import httpx2
import pytest

from tests.client import samples
from tests.client.fake_time import FakeTime
from tests.client.offline import SECRET_KEY, make_async_client
from tests.client.script import Script, envelope, ok
from workbench import models
from workbench._client import AsyncClient, Client
from workbench._exceptions import APIError
from workbench.resources._base import AsyncResource, SyncResource
from workbench.signing import parse_timestamp, verify

Case = tuple[
    str,  # id
    Callable[..., Any],  # call on a client's namespaces (sync or async), passing **options on
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
        lambda c, **o: c.sandbox.fixtures(**o),
        "GET",
        "/sandbox/fixtures",
        None,
        True,
        samples.FIXTURES,
        models.SandboxFixtures,
    ),
    (
        "sandbox.advance_clock",
        lambda c, **o: c.sandbox.advance_clock(3600, **o),
        "POST",
        "/sandbox/clock/advance",
        {"seconds": 3600},
        True,
        {"businessTime": samples.TS},
        models.BusinessTime,
    ),
    (
        "sandbox.tick",
        lambda c, **o: c.sandbox.tick(**o),
        "POST",
        "/sandbox/reconciler/tick",
        {},
        True,
        {"processed": {"refunds": 1}},
        models.ReconcilerPass,
    ),
    (
        "sandbox.settle",
        lambda c, **o: c.sandbox.settle(**o),
        "POST",
        "/sandbox/settle",
        {},
        True,
        {"settled": 2},
        models.SettleResult,
    ),
    (
        "sandbox.reset",
        lambda c, **o: c.sandbox.reset(**o),
        "POST",
        "/sandbox/reset",
        {},
        True,
        {"deleted": {"payments": 3}},
        models.ResetResult,
    ),
    (
        "sandbox.events",
        lambda c, **o: c.sandbox.events(**o),
        "GET",
        "/sandbox/events",
        None,
        True,
        samples.EVENTS,
        models.SandboxEventList,
    ),
    (
        "sandbox.deliveries",
        lambda c, **o: c.sandbox.deliveries("evt_1", **o),
        "GET",
        "/sandbox/events/evt_1/deliveries",
        None,
        True,
        samples.DELIVERIES,
        models.EventDeliveries,
    ),
    (
        "sandbox.fail_next",
        lambda c, **o: c.sandbox.fail_next("timeout", seconds=2, **o),
        "POST",
        "/sandbox/fail-next",
        {"mode": "timeout", "seconds": 2},
        True,
        {"failNext": "timeout"},
        models.FailNext,
    ),
    (
        "sandbox.set_latency",
        lambda c, **o: c.sandbox.set_latency(50, **o),
        "POST",
        "/sandbox/latency",
        {"milliseconds": 50},
        True,
        {"latencyMs": 50},
        models.Latency,
    ),
    (
        "sandbox.set_rate_limit",
        lambda c, **o: c.sandbox.set_rate_limit(5.0, burst=2, **o),
        "POST",
        "/sandbox/rate-limit",
        {"perSecond": 5.0, "burst": 2},
        True,
        {"perSecond": 5.0, "burst": 2},
        models.RateLimit,
    ),
    (
        "sandbox.set_authorization_lifetime",
        lambda c, **o: c.sandbox.set_authorization_lifetime(3600, **o),
        "POST",
        "/sandbox/authorization-lifetime",
        {"seconds": 3600},
        True,
        {"seconds": 3600},
        models.AuthorizationLifetime,
    ),
    (
        "sandbox.set_webhook",
        lambda c, **o: c.sandbox.set_webhook("http://127.0.0.1:9/h", **o),
        "PUT",
        "/sandbox/webhook",
        {"url": "http://127.0.0.1:9/h"},
        True,
        {"url": "http://127.0.0.1:9/h"},
        models.WebhookTarget,
    ),
    (
        "sandbox.answer_challenge",
        lambda c, **o: c.sandbox.answer_challenge("pay_1", "cor_1", **o),
        "POST",
        "/sandbox/acs/pay_1",
        {"correlationId": "cor_1", "code": "123456"},
        False,
        samples.CHALLENGE,
        models.ChallengeAnswer,
    ),
    (
        "sandbox.create_merchant",
        lambda c, **o: c.sandbox.create_merchant(name="mine", **o),
        "POST",
        "/sandbox/merchants",
        {"name": "mine"},
        False,
        samples.MERCHANT,
        models.MerchantCredentials,
    ),
    (
        "sandbox.list_merchants",
        lambda c, **o: c.sandbox.list_merchants(**o),
        "GET",
        "/sandbox/merchants",
        None,
        False,
        {"items": [{"merchantId": "mrc_1", "name": "mine", "builtIn": False}]},
        models.MerchantList,
    ),
    (
        "sandbox.delete_merchant",
        lambda c, **o: c.sandbox.delete_merchant("mrc_1", **o),
        "DELETE",
        "/sandbox/merchants/mrc_1",
        None,
        True,
        {"merchantId": "mrc_1", "deleted": {"payments": 2}},
        models.MerchantDeletion,
    ),
    (
        "cards.tokenize",
        lambda c, **o: c.cards.tokenize(
            card_number="4543 6000 0000 0001", expiry_month=12, expiry_year=2030, cvc="123", **o
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
        lambda c, **o: c.sessions.create(
            transaction_id="order-1",
            return_url="https://shop.test/done",
            amount=12500,
            description="Kahve",
            installment_enabled=True,
            **o,
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
        lambda c, **o: c.payments.charge_card(
            transaction_id="order-1",
            amount=12500,
            card_token="tok_test_success",
            installment_count=3,
            capture=False,
            **o,
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
        lambda c, **o: c.payments.complete_3ds("pay_1", pares="PARES", correlation_id="cor_1", **o),
        "POST",
        "/v1/payments/pay_1/3ds-callback",
        {"pares": "PARES", "correlationId": "cor_1"},
        True,
        samples.THREE_DS,
        models.ThreeDSecureResult,
    ),
    (
        "payments.capture",
        lambda c, **o: c.payments.capture("pay_1", **o),
        "POST",
        "/v1/payments/pay_1/capture",
        {},
        True,
        samples.CAPTURE,
        models.CaptureResult,
    ),
    (
        "payments.void",
        lambda c, **o: c.payments.void("pay_1", reason="customer asked", **o),
        "POST",
        "/v1/payments/pay_1/void",
        {"reason": "customer asked"},
        True,
        samples.VOID,
        models.VoidResult,
    ),
    (
        "payments.refund",
        lambda c, **o: c.payments.refund("pay_1", amount=2500, **o),
        "POST",
        "/v1/payments/pay_1/refund",
        {"amount": 2500},
        True,
        samples.REFUND,
        models.RefundResult,
    ),
    (
        "payments.retrieve",
        lambda c, **o: c.payments.retrieve("pay_1", **o),
        "GET",
        "/v1/payments/pay_1",
        None,
        True,
        samples.PAYMENT,
        models.Payment,
    ),
    (
        "payments.public_status",
        lambda c, **o: c.payments.public_status("pay_1", **o),
        "GET",
        "/v1/payments/pay_1/public-status",
        None,
        False,
        samples.PUBLIC_STATUS,
        models.PublicPaymentStatus,
    ),
    (
        "subscriptions.create",
        lambda c, **o: c.subscriptions.create(
            store_id="sto_1",
            customer_id="cus_1",
            amount_minor=9900,
            interval_count=1,
            interval_unit="month",
            card_token="tok_test_success",
            trial_end_at="2026-04-01T00:00:00Z",
            **o,
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
        lambda c, **o: c.subscriptions.retrieve("sub_1", **o),
        "GET",
        "/v1/subscriptions/sub_1",
        None,
        True,
        samples.SUBSCRIPTION,
        models.Subscription,
    ),
    (
        "subscriptions.charges",
        lambda c, **o: c.subscriptions.charges("sub_1", **o),
        "GET",
        "/v1/subscriptions/sub_1/charges",
        None,
        True,
        samples.CHARGES,
        models.SubscriptionChargeList,
    ),
    (
        "subscriptions.list_page",
        lambda c, **o: c.subscriptions.list_page({"status": "active"}, "cur_1", **o),
        "GET",
        "/v1/subscriptions",
        None,
        True,
        {"items": [samples.LIST_ITEM]},
        models.SubscriptionPage,
    ),
    (
        "subscriptions.cancel",
        lambda c, **o: c.subscriptions.cancel("sub_1", at_period_end=True, reason="moving", **o),
        "POST",
        "/v1/subscriptions/sub_1/cancel",
        {"atPeriodEnd": True, "reason": "moving"},
        True,
        samples.CANCEL,
        models.SubscriptionCancellation,
    ),
    (
        "subscriptions.pause",
        lambda c, **o: c.subscriptions.pause("sub_1", **o),
        "POST",
        "/v1/subscriptions/sub_1/pause",
        {},
        True,
        samples.UPDATE,
        models.SubscriptionUpdate,
    ),
    (
        "subscriptions.resume",
        lambda c, **o: c.subscriptions.resume("sub_1", **o),
        "POST",
        "/v1/subscriptions/sub_1/resume",
        {},
        True,
        samples.UPDATE,
        models.SubscriptionUpdate,
    ),
    (
        "subscriptions.retry",
        lambda c, **o: c.subscriptions.retry("sub_1", **o),
        "POST",
        "/v1/subscriptions/sub_1/retry",
        {},
        True,
        samples.RETRY,
        models.SubscriptionUpdate,
    ),
    (
        "subscriptions.charge_now",
        lambda c, **o: c.subscriptions.charge_now("sub_1", **o),
        "POST",
        "/v1/subscriptions/sub_1/charge-now",
        {},
        True,
        samples.RECEIPT,
        models.ChargeReceipt,
    ),
    (
        "portal.retrieve",
        lambda c, **o: c.portal.retrieve("ph_abc", **o),
        "GET",
        "/v1/public/subscriptions/ph_abc",
        None,
        False,
        samples.PUBLIC_SUB,
        models.PublicSubscription,
    ),
    (
        "portal.cancel",
        lambda c, **o: c.portal.cancel("ph_abc", **o),
        "POST",
        "/v1/public/subscriptions/ph_abc/cancel",
        {},
        False,
        samples.PUBLIC_CANCEL,
        models.PublicCancellation,
    ),
    (
        "portal.update_card_session",
        lambda c, **o: c.portal.update_card_session("ph_abc", **o),
        "POST",
        "/v1/public/subscriptions/ph_abc/update-card-session",
        {},
        False,
        samples.UPDATE_CARD,
        models.UpdateCardSession,
    ),
]


def _check_request(
    request: httpx2.Request, method: str, path: str, body: dict[str, Any] | None, signed: bool
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
        "pk_test_a_0000", "sk_test_b_0000", "http://t", transport=httpx2.MockTransport(script)
    ) as c:
        pass
    assert c._http.is_closed


def test_a_given_http_client_is_not_closed(script: Script) -> None:
    http = httpx2.Client(transport=httpx2.MockTransport(script))
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


#: What each call tells those watching the client (``ResponseInfo``): its action, and
#: the object it acted on (from the call, or from the answer for a create).
SUBJECTS: dict[str, tuple[str, str | None]] = {
    "sandbox.fixtures": ("fixtures", None),
    "sandbox.advance_clock": ("advance_clock", None),
    "sandbox.tick": ("tick", None),
    "sandbox.settle": ("settle", None),
    "sandbox.reset": ("reset", None),
    "sandbox.events": ("events", None),
    "sandbox.deliveries": ("deliveries", None),
    "sandbox.fail_next": ("fail_next", None),
    "sandbox.set_latency": ("set_latency", None),
    "sandbox.set_rate_limit": ("set_rate_limit", None),
    "sandbox.set_authorization_lifetime": ("set_authorization_lifetime", None),
    "sandbox.set_webhook": ("set_webhook", None),
    "sandbox.answer_challenge": ("answer_challenge", None),
    "sandbox.create_merchant": ("create_merchant", None),
    "sandbox.list_merchants": ("merchants", None),
    "sandbox.delete_merchant": ("delete_merchant", "mrc_1"),
    "cards.tokenize": ("tokenize", None),
    "sessions.create": ("create", samples.SESSION["sessionId"]),
    "payments.charge_card": ("charge", "pay_1"),
    "payments.complete_3ds": ("3ds_callback", "pay_1"),
    "payments.capture": ("capture", "pay_1"),
    "payments.void": ("void", "pay_1"),
    "payments.refund": ("refund", "pay_1"),
    "payments.retrieve": ("retrieve", "pay_1"),
    "payments.public_status": ("public_status", "pay_1"),
    "subscriptions.create": ("create", "sub_1"),
    "subscriptions.retrieve": ("retrieve", "sub_1"),
    "subscriptions.charges": ("charges", "sub_1"),
    "subscriptions.list_page": ("list", None),
    "subscriptions.cancel": ("cancel", "sub_1"),
    "subscriptions.pause": ("pause", "sub_1"),
    "subscriptions.resume": ("resume", "sub_1"),
    "subscriptions.retry": ("retry", "sub_1"),
    "subscriptions.charge_now": ("charge_now", "sub_1"),
    "portal.retrieve": ("retrieve", "ph_abc"),
    "portal.cancel": ("public_cancel", "ph_abc"),
    "portal.update_card_session": ("update_card_session", "ph_abc"),
}


def _namespaces(client: Client | AsyncClient) -> dict[str, object]:
    return {
        name: value
        for name, value in vars(client).items()
        if isinstance(value, SyncResource | AsyncResource)
    }


def test_every_resource_method_has_a_case() -> None:
    """A new method must get a case here, so the checks below cover it too."""
    with Client("pk_test_a_0000", "sk_test_b_0000", "http://t") as c:
        methods = {
            f"{name}.{method}"
            for name, namespace in _namespaces(c).items()
            for method, _ in inspect.getmembers(type(namespace), inspect.isfunction)
            if not method.startswith("_")
        }
    covered = {case[0] for case in CASES}
    # ``list`` returns a pager over ``list_page`` (test_pagination.py, and below).
    assert methods - covered == {"subscriptions.list"}
    assert covered <= methods
    assert set(SUBJECTS) == covered


def test_async_namespaces_have_the_same_methods_and_parameters() -> None:
    async def namespaces() -> tuple[dict[str, object], dict[str, object]]:
        with Client("pk_test_a_0000", "sk_test_b_0000", "http://t") as c:
            async with AsyncClient("pk_test_a_0000", "sk_test_b_0000", "http://t") as a:
                return _namespaces(c), _namespaces(a)

    sync, async_ = asyncio.run(namespaces())
    assert sync.keys() == async_.keys()
    for name, namespace in sync.items():
        for method, function in inspect.getmembers(type(namespace), inspect.isfunction):
            if method.startswith("_"):
                continue
            twin = getattr(type(async_[name]), method)
            params = inspect.signature(function).parameters
            assert inspect.signature(twin).parameters.keys() == params.keys(), (name, method)
            assert params["options"].kind is inspect.Parameter.VAR_KEYWORD, (name, method)


@pytest.mark.parametrize(
    ("case_id", "call", "reply"), [(c[0], c[1], c[6]) for c in CASES], ids=[c[0] for c in CASES]
)
def test_answers_carry_the_action_and_object(
    client: Client, script: Script, case_id: str, call: Callable[..., Any], reply: dict[str, Any]
) -> None:
    script.replies = [ok(reply)]
    info = call(client).response
    assert (info.action, info.object_id) == SUBJECTS[case_id]
    if case_id == "subscriptions.charge_now":
        assert info.object_state == "charging"  # the receipt says "queuing"
    elif case_id == "portal.update_card_session" or info.object_id is None:
        assert info.object_state is None
    else:
        assert info.object_state == reply.get("status")


def _per_call(case_id: str, method: str) -> dict[str, Any]:
    options: dict[str, Any] = {
        "timeout": 7.5,
        "max_retries": 1,
        "extra_headers": {"X-Trace-Id": f"trace-{case_id}"},
    }
    if method == "POST":
        options["idempotency_key"] = _key(case_id)
    return options


def _key(case_id: str) -> str:
    """A UUID v4 of the case's own (the only form the client sends as Idempotency-Key)."""
    return str(uuid.UUID(hashlib.sha256(case_id.encode()).hexdigest()[:32], version=4))


def _check_per_call(case_id: str, method: str, requests: list[httpx2.Request]) -> None:
    # max_retries=1: the 503 is retried once (the client's own default is 2).
    assert len(requests) == 2
    for request in requests:
        assert request.extensions["timeout"] == httpx2.Timeout(7.5).as_dict()
        assert request.headers["X-Trace-Id"] == f"trace-{case_id}"
        if method == "POST":
            assert request.headers["Idempotency-Key"] == _key(case_id)


@pytest.mark.parametrize(
    ("case_id", "call", "method", "reply"),
    [(c[0], c[1], c[2], c[6]) for c in CASES],
    ids=[c[0] for c in CASES],
)
def test_sync_per_call_options_reach_the_wire(
    client: Client,
    script: Script,
    case_id: str,
    call: Callable[..., Any],
    method: str,
    reply: dict[str, Any],
) -> None:
    script.replies = [envelope("SVC-GW-5000", 503), ok(reply)]
    result = call(client, **_per_call(case_id, method))
    _check_per_call(case_id, method, script.requests)
    assert result.retries == 1
    script.requests.clear()
    with pytest.raises(APIError):
        call(client, max_retries=0)
    assert len(script.requests) == 1
    assert "X-Trace-Id" not in script.requests[0].headers
    assert script.requests[0].extensions["timeout"] == httpx2.Timeout(30.0).as_dict()


@pytest.mark.parametrize(
    ("case_id", "call", "method", "reply"),
    [(c[0], c[1], c[2], c[6]) for c in CASES],
    ids=[c[0] for c in CASES],
)
def test_async_per_call_options_reach_the_wire(
    script: Script,
    fake_time: FakeTime,
    case_id: str,
    call: Callable[..., Any],
    method: str,
    reply: dict[str, Any],
) -> None:
    script.replies = [envelope("SVC-GW-5000", 503), ok(reply)]

    async def run() -> None:
        async with make_async_client(script, fake_time) as c:
            await call(c, **_per_call(case_id, method))
            _check_per_call(case_id, method, script.requests)
            script.requests.clear()
            with pytest.raises(APIError):
                await call(c, max_retries=0)
            assert len(script.requests) == 1

    asyncio.run(run())


def test_list_passes_per_call_options_to_every_page(client: Client, script: Script) -> None:
    first = {"items": [samples.LIST_ITEM], "nextCursor": "cur_2"}
    script.replies = [ok(first), ok({"items": [{**samples.LIST_ITEM, "id": "sub_2"}]})]
    subs = client.subscriptions.list(timeout=4.0, extra_headers={"X-Trace-Id": "t"}).to_list()
    assert [s.id for s in subs] == ["sub_1", "sub_2"]
    assert [r.headers["X-Trace-Id"] for r in script.requests] == ["t", "t"]
    assert {r.extensions["timeout"]["read"] for r in script.requests} == {4.0}


def test_a_misspelt_per_call_option_is_refused_before_sending(
    client: Client, script: Script
) -> None:
    with pytest.raises(TypeError, match="'timout'"):
        client.payments.retrieve("pay_1", timout=5)  # type: ignore[call-arg]
    assert script.requests == []
