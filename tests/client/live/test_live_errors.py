"""Errors and retries against the running sandbox: typed codes, fail-next, clock learning."""

from __future__ import annotations

import logging
import uuid
from datetime import timedelta

import httpx2
import pytest

from tests.client.live.target import Live
from workbench._base_client import RequestOptions
from workbench._client import Client
from workbench._exceptions import (
    APIKeyError,
    APITimeoutError,
    IdempotencyConflictError,
    InvalidRequestError,
    MethodNotAllowedError,
    NotFoundError,
    RateLimitError,
    RawCardDataError,
    RequestTooLargeError,
    ServerError,
    SignatureError,
    ThreeDSecureAssertionError,
    TimestampError,
)
from workbench.models import CardCharge
from workbench.signing import parse_timestamp, verify


def _order() -> str:
    return f"order-{uuid.uuid4().hex[:12]}"


def test_fail_next_500_is_retried_under_the_same_key(client: Client) -> None:
    client.sandbox.fail_next("500")
    charge = client.payments.charge_card(
        transaction_id=_order(), amount=1_000, card_token="tok_test_success"
    )
    assert charge.retries == 1
    assert charge.status == "captured"
    payment = client.payments.retrieve(charge.payment_id)
    assert payment.amount == 1_000


def test_fail_next_429_honours_retry_after(client: Client) -> None:
    waits: list[float] = []
    client._sleep = waits.append
    client.sandbox.fail_next("429")
    payment = client.payments.charge_card(
        transaction_id=_order(), amount=1_000, card_token="tok_test_success"
    )
    assert payment.retries == 1
    assert waits == [1.0]


def test_fail_next_timeout_is_retried(live: Live) -> None:
    with live.client() as setup:
        setup.sandbox.reset()
        setup.sandbox.fail_next("timeout", seconds=3)
    with live.client(timeout=1.0) as client:
        charge = client.payments.charge_card(
            transaction_id=_order(), amount=1_000, card_token="tok_test_success"
        )
        assert charge.retries == 1


def test_timeouts_exhaust_retries(live: Live) -> None:
    with live.client() as setup:
        setup.sandbox.reset()
        setup.sandbox.fail_next("timeout", seconds=2)
    with live.client(timeout=0.5, max_retries=0) as client, pytest.raises(APITimeoutError):
        client.payments.retrieve("pay_missing")


def test_rate_limit_maps_and_retries(client: Client) -> None:
    waits: list[float] = []
    client._sleep = waits.append
    client.sandbox.set_rate_limit(0.001, burst=1)
    with pytest.raises(NotFoundError):
        client.payments.retrieve("pay_missing")  # takes the one token of the bucket
    with pytest.raises(RateLimitError) as info:
        client.payments.retrieve("pay_missing")
    assert info.value.code == "SVC-GW-1004"
    assert info.value.retries == 2
    assert waits == [60.0, 60.0]  # Retry-After (1000 s) capped
    client.sandbox.set_rate_limit(None)


def test_idempotency_conflict_is_not_retried(client: Client) -> None:
    order = _order()
    key = str(uuid.uuid4())
    client.payments.charge_card(
        transaction_id=order, amount=1_000, card_token="tok_test_success", idempotency_key=key
    )
    with pytest.raises(IdempotencyConflictError) as info:
        client.payments.charge_card(
            transaction_id=order,
            amount=2_000,
            card_token="tok_test_success",
            idempotency_key=key,
        )
    assert info.value.http_status == 409
    assert info.value.retries == 0


def test_validation_and_not_found(client: Client) -> None:
    with pytest.raises(InvalidRequestError) as info:
        client.payments.charge_card(
            transaction_id=_order(),
            amount=1_000,
            card_token="tok_test_success",
            installment_count=13,
        )
    assert "installmentCount" in info.value.message
    with pytest.raises(NotFoundError):
        client.payments.retrieve("pay_does_not_exist")


def test_raw_card_number_sent_anyway_is_refused_by_the_sandbox(client: Client) -> None:
    options = RequestOptions(
        "POST",
        "/v1/payments/card",
        {
            "transactionId": _order(),
            "amount": 1_000,
            "currency": "TRY",
            "cardToken": "4543600000000001",
        },
    )
    with pytest.raises(RawCardDataError):
        client.request(options, CardCharge)


def test_wrong_secret_and_unknown_key(live: Live) -> None:
    with (
        Client(live.api_key, "sk_test_wrong_secret_000", live.base_url) as c,
        pytest.raises(SignatureError) as info,
    ):
        c.payments.retrieve("pay_1")
    assert info.value.message.startswith("X-Signature does not match")  # the service's words
    assert str(info.value).endswith(
        "; this client signed the request itself, so the canonical string is right: the "
        "secret key (sk_…_000) most likely does not belong to the API key (pk_test_…0001); "
        "use the key pair issued together for this environment"
    )
    assert "wrong_secret" not in str(info.value) + repr(info.value)
    with (
        Client("pk_test_unknown_0000", live.secret_key, live.base_url) as c,
        pytest.raises(APIKeyError),
    ):
        c.payments.retrieve("pay_1")


def test_skewed_clock_is_learnt_from_the_date_header(
    live: Live, caplog: pytest.LogCaptureFixture
) -> None:
    with live.client() as client:
        client._auth.clock_offset = timedelta(minutes=-20)
        with caplog.at_level(logging.WARNING, logger="workbench"):
            fixtures = client.sandbox.fixtures()
        assert fixtures.retries == 1
        assert abs(client.clock_offset.total_seconds()) < 5
        assert any("clock" in r.getMessage() for r in caplog.records)


def test_skewed_clock_without_learning_is_a_timestamp_error(live: Live) -> None:
    with live.client(sync_clock=False) as client:
        client._auth.clock_offset = timedelta(minutes=20)
        with pytest.raises(TimestampError) as info:
            client.sandbox.fixtures()
        assert info.value.http_status == 401


def test_server_error_without_retries_carries_the_request_id(live: Live) -> None:
    with live.client(max_retries=0) as client:
        client.sandbox.reset()
        client.sandbox.fail_next("500")
        with pytest.raises(ServerError) as info:
            client.payments.retrieve("pay_1")
        assert info.value.code == "SVC-GW-5000"
        assert info.value.request_id
        assert info.value.request_id in str(info.value)
        assert info.value.retries == 0


def test_fail_next_retry_on_the_wire_same_key_fresh_timestamp(live: Live) -> None:
    sent: list[httpx2.Request] = []
    http = httpx2.Client(event_hooks={"request": [sent.append]})
    with Client(live.api_key, live.secret_key, live.base_url, http_client=http) as client:
        client.sandbox.reset()
        client.sandbox.fail_next("429")  # answered with Retry-After: 1, really waited
        sent.clear()
        charge = client.payments.charge_card(
            transaction_id=_order(), amount=1_000, card_token="tok_test_success"
        )
    http.close()
    assert charge.retries == 1
    assert [r.url.path for r in sent] == ["/v1/payments/card"] * 2
    keys = {r.headers["Idempotency-Key"] for r in sent}
    assert keys == {charge.idempotency_key}
    first, second = (parse_timestamp(r.headers["X-Timestamp"]) for r in sent)
    assert second > first
    for request in sent:
        verify(
            live.secret_key,
            signature=request.headers["X-Signature"],
            timestamp=request.headers["X-Timestamp"],
            method=request.method,
            path=request.url.path,
            body=request.content,
        )


def test_more_codes_the_sandbox_returns(live: Live) -> None:
    with live.client(max_retries=0) as client:
        client.sandbox.reset()
        with pytest.raises(MethodNotAllowedError):
            client.request(RequestOptions("DELETE", "/v1/payments/pay_1"), CardCharge)
        huge = {"transactionId": _order(), "amount": 1_000, "currency": "TRY",
                "returnUrl": "https://shop.example/r", "description": "x" * 70_000}  # fmt: skip
        with pytest.raises(RequestTooLargeError):
            client.request(RequestOptions("POST", "/v1/payments/sessions", huge), CardCharge)
        charge = client.payments.charge_card(
            transaction_id=_order(), amount=1_000, card_token="tok_test_3ds_challenge"
        )
        assert charge.correlation_id
        with pytest.raises(ThreeDSecureAssertionError):
            client.payments.complete_3ds(
                charge.payment_id, pares="forged.0000", correlation_id=charge.correlation_id
            )
        client.sandbox.fail_next("timeout", seconds=1)
        with pytest.raises(ServerError) as info:
            client.payments.retrieve(charge.payment_id)
        assert info.value.code == "SVC-GW-5030"
