"""Retries: one key per call, a fresh signed timestamp per attempt, exact attempt counts."""

from __future__ import annotations

import asyncio
import json
import logging
from datetime import timedelta
from email.utils import format_datetime

import httpx2
import pytest

import workbench._base_client as base_client
from tests.client.fake_time import FakeTime
from tests.client.offline import SECRET_KEY, make_async_client
from tests.client.script import Script, envelope, ok
from workbench._client import Client
from workbench._exceptions import (
    APIConnectionError,
    APITimeoutError,
    BadRequestError,
    IdempotencyConflictError,
    NotFoundError,
    PaymentStateError,
    RateLimitError,
    ServerError,
    TimestampError,
    UnexpectedResponseError,
)
from workbench._retry import RetryPolicy, parse_retry_after
from workbench.signing import parse_timestamp, verify

CHARGE = {
    "paymentId": "pay_1",
    "status": "captured",
    "amount": 12500,
    "currency": "TRY",
}


def charge(client: Client, **kwargs: object) -> object:
    return client.payments.charge_card(
        transaction_id="order-1", amount=12500, card_token="tok_test_success", **kwargs
    )


def test_same_key_and_fresh_signed_timestamp_on_every_attempt(
    client: Client, script: Script, fake_time: FakeTime
) -> None:
    script.replies = [envelope("SVC-GW-5030", 503), envelope("SVC-GW-5000", 500), ok(CHARGE)]
    result = client.payments.charge_card(
        transaction_id="order-1", amount=12500, card_token="tok_test_success"
    )
    assert len(script.requests) == 3
    keys = script.header("Idempotency-Key")
    assert keys[0] is not None
    assert keys == [keys[0]] * 3
    assert result.idempotency_key == keys[0]
    assert result.retries == 2
    assert result.response is not None
    assert result.response.attempts == 3
    stamps = script.header("X-Timestamp")
    assert len(set(stamps)) == 3
    for request in script.requests:
        # every attempt verifies on its own, over the bytes that were sent, at its own time
        verify(
            SECRET_KEY,
            signature=request.headers["X-Signature"],
            timestamp=request.headers["X-Timestamp"],
            method=request.method,
            path=request.url.path,
            body=request.content,
            now=parse_timestamp(request.headers["X-Timestamp"]),
        )
    assert len(fake_time.sleeps) == 2


def test_body_is_serialised_once_per_call(
    client: Client, script: Script, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[object] = []
    original = base_client._serialise

    def counting(body: object) -> bytes:
        calls.append(body)
        return original(body)  # type: ignore[arg-type]

    monkeypatch.setattr(base_client, "_serialise", counting)
    script.replies = [envelope("SVC-GW-5000", 500), envelope("SVC-GW-5000", 500), ok(CHARGE)]
    charge(client)
    assert len(calls) == 1
    contents = {r.content for r in script.requests}
    assert len(contents) == 1
    assert json.loads(contents.pop())["amount"] == 12500


def test_callers_key_is_used_on_every_attempt(client: Client, script: Script) -> None:
    script.replies = [envelope("SVC-GW-2002", 409), ok(CHARGE)]
    result = charge(client, idempotency_key="c429e09b-7c35-4507-87d1-261597ca25ab")
    assert script.header("Idempotency-Key") == [
        "c429e09b-7c35-4507-87d1-261597ca25ab",
        "c429e09b-7c35-4507-87d1-261597ca25ab",
    ]
    assert result.idempotency_key == "c429e09b-7c35-4507-87d1-261597ca25ab"  # type: ignore[attr-defined]
    assert result.retries == 1  # type: ignore[attr-defined]


def test_each_call_gets_its_own_key(client: Client, script: Script) -> None:
    script.replies = [ok(CHARGE)]
    first = charge(client)
    second = charge(client)
    assert first.idempotency_key != second.idempotency_key  # type: ignore[attr-defined]


def test_reads_carry_no_idempotency_key(client: Client, script: Script) -> None:
    script.replies = [envelope("SVC-GW-5030", 503), ok({**CHARGE, "id": "pay_1"})]
    payment = client.payments.retrieve("pay_1")
    assert script.header("Idempotency-Key") == [None, None]
    assert payment.idempotency_key is None
    assert payment.retries == 1


@pytest.mark.parametrize(
    ("reply", "error"),
    [
        (envelope("SVC-GW-2001", 409), IdempotencyConflictError),
        (envelope("SVC-VAL-4001", 400), BadRequestError),
        (envelope("SVC-GW-4004", 404), NotFoundError),
        (envelope("SVC-PAY-4090", 409), PaymentStateError),
    ],
)
def test_no_retry_on_conflicts_and_client_errors(
    client: Client, script: Script, fake_time: FakeTime, reply: httpx2.Response, error: type
) -> None:
    script.replies = [reply, ok(CHARGE)]
    with pytest.raises(error) as info:
        charge(client)
    assert len(script.requests) == 1
    assert info.value.retries == 0
    assert fake_time.sleeps == []


@pytest.mark.parametrize("status", [408, 429, 500, 502, 503, 504])
def test_retryable_statuses_are_retried(client: Client, script: Script, status: int) -> None:
    script.replies = [envelope("SVC-NEW-0001", status), ok(CHARGE)]
    result = charge(client)
    assert len(script.requests) == 2
    assert result.retries == 1  # type: ignore[attr-defined]


@pytest.mark.parametrize("status", [408, 429, 502, 503, 504])
def test_a_later_status_in_plain_text_is_retried(
    client: Client, script: Script, status: int
) -> None:
    script.replies = [httpx2.Response(status, text="busy"), ok(CHARGE)]
    result = charge(client)
    assert len(script.requests) == 2
    assert result.retries == 1  # type: ignore[attr-defined]


@pytest.mark.parametrize("status", [500, 501, 404])
def test_another_server_answering_without_json_is_not_retried(
    client: Client, script: Script, status: int
) -> None:
    script.replies = [httpx2.Response(status, text="<html><title>Nope</title></html>")]
    with pytest.raises(UnexpectedResponseError, match=r'an HTML page \("Nope"\)') as info:
        charge(client)
    assert len(script.requests) == 1
    assert not info.value.retryable
    assert "<html>" not in str(info.value)


def test_gives_up_after_max_retries_with_the_last_error(client: Client, script: Script) -> None:
    script.replies = [envelope("SVC-GW-5000", 500, request_id="req-last")]
    with pytest.raises(ServerError) as info:
        charge(client)
    assert len(script.requests) == 3
    assert info.value.retries == 2
    assert info.value.request_id == "req-last"


def test_max_retries_zero_sends_once(script: Script) -> None:
    script.replies = [envelope("SVC-GW-5000", 500)]
    with (
        Client(
            "pk_test_x_0000",
            "sk_test_y_0000",
            "http://t",
            transport=httpx2.MockTransport(script),
            max_retries=0,
        ) as c,
        pytest.raises(ServerError),
    ):
        c.payments.retrieve("pay_1")
    assert len(script.requests) == 1


def test_retry_after_is_honoured(client: Client, script: Script, fake_time: FakeTime) -> None:
    script.replies = [
        envelope("SVC-GW-1004", 429, **{"Retry-After": "3"}),
        envelope("SVC-GW-1004", 429, **{"Retry-After": "7"}),
        ok(CHARGE),
    ]
    charge(client)
    assert fake_time.sleeps == [3.0, 7.0]


def test_retry_after_is_capped(client: Client, script: Script, fake_time: FakeTime) -> None:
    script.replies = [envelope("SVC-GW-1004", 429, **{"Retry-After": "3600"}), ok(CHARGE)]
    charge(client)
    assert fake_time.sleeps == [RetryPolicy().max_retry_after]


def test_rate_limit_error_after_retries(client: Client, script: Script) -> None:
    script.replies = [envelope("SVC-GW-1004", 429, **{"Retry-After": "1"})]
    with pytest.raises(RateLimitError):
        charge(client)
    assert len(script.requests) == 3


def test_connection_errors_are_retried_then_raised(client: Client, script: Script) -> None:
    script.replies = [httpx2.ConnectError("refused")]
    with pytest.raises(APIConnectionError) as info:
        charge(client)
    assert not isinstance(info.value, APITimeoutError)
    assert len(script.requests) == 3
    assert info.value.retries == 2
    assert len(set(script.header("Idempotency-Key"))) == 1


def test_timeouts_are_retried_under_the_same_key(client: Client, script: Script) -> None:
    script.replies = [httpx2.ReadTimeout("slow"), httpx2.ConnectTimeout("slow"), ok(CHARGE)]
    result = charge(client)
    assert result.retries == 2  # type: ignore[attr-defined]
    assert len(set(script.header("Idempotency-Key"))) == 1


def test_timeout_error_when_all_attempts_time_out(client: Client, script: Script) -> None:
    script.replies = [httpx2.ReadTimeout("slow")]
    with pytest.raises(APITimeoutError):
        charge(client)
    assert len(script.requests) == 3


def test_backoff_grows_with_bounded_jitter() -> None:
    policy = RetryPolicy(initial_delay=0.5, max_delay=3.0, jitter=0.25)
    for _ in range(200):
        assert 0.375 <= policy.delay(0) <= 0.5
        assert 0.75 <= policy.delay(1) <= 1.0
        assert 2.25 <= policy.delay(5) <= 3.0
    assert len({policy.delay(0) for _ in range(20)}) > 1


def test_parse_retry_after_reads_seconds_and_dates(fake_time: FakeTime) -> None:
    assert parse_retry_after("2.5") == 2.5
    assert parse_retry_after("-3") == 0.0
    assert parse_retry_after(None) is None
    assert parse_retry_after("soon") is None
    later = fake_time.now + timedelta(seconds=30)
    assert parse_retry_after(format_datetime(later, usegmt=True), now=fake_time.now) == 30.0


def test_learns_the_server_clock_once_after_a_skew_rejection(
    client: Client, script: Script, fake_time: FakeTime, caplog: pytest.LogCaptureFixture
) -> None:
    server_now = fake_time.now + timedelta(minutes=10)
    date = format_datetime(server_now, usegmt=True)
    script.replies = [envelope("SVC-GW-1001", 401, Date=date), ok(CHARGE)]
    with caplog.at_level(logging.WARNING, logger="workbench"):
        result = charge(client)
    first, second = (parse_timestamp(t) for t in script.header("X-Timestamp") if t)
    assert first == fake_time.now
    assert abs(second - server_now) <= timedelta(seconds=1)
    assert result.retries == 1  # type: ignore[attr-defined]
    assert client.clock_offset == timedelta(minutes=10)
    assert any("clock" in r.getMessage() for r in caplog.records)


def test_skew_rejection_is_raised_when_clock_learning_is_off(script: Script) -> None:
    date = "Sat, 14 Mar 2099 09:36:53 GMT"
    script.replies = [envelope("SVC-GW-1001", 401, Date=date), ok(CHARGE)]
    with (
        Client(
            "pk_test_x_0000",
            "sk_test_y_0000",
            "http://t",
            transport=httpx2.MockTransport(script),
            sync_clock=False,
        ) as c,
        pytest.raises(TimestampError),
    ):
        c.payments.retrieve("pay_1")
    assert len(script.requests) == 1


def test_skew_rejection_with_an_agreeing_clock_is_not_retried(
    client: Client, script: Script, fake_time: FakeTime
) -> None:
    date = format_datetime(fake_time.now, usegmt=True)
    script.replies = [envelope("SVC-GW-1001", 401, Date=date), ok(CHARGE)]
    with pytest.raises(TimestampError):
        charge(client)
    assert len(script.requests) == 1


def test_async_client_retries_the_same_way(script: Script, fake_time: FakeTime) -> None:
    script.replies = [
        envelope("SVC-GW-1004", 429, **{"Retry-After": "2"}),
        httpx2.ConnectError("reset"),
        ok(CHARGE),
    ]

    async def run() -> object:
        async with make_async_client(script, fake_time) as c:
            return await c.payments.charge_card(
                transaction_id="order-1", amount=12500, card_token="tok_test_success"
            )

    result = asyncio.run(run())
    assert result.retries == 2  # type: ignore[attr-defined]
    assert len(set(script.header("Idempotency-Key"))) == 1
    assert len(set(script.header("X-Timestamp"))) == 3
    assert fake_time.sleeps[0] == 2.0


def test_async_client_does_not_retry_a_conflict(script: Script, fake_time: FakeTime) -> None:
    script.replies = [envelope("SVC-GW-2001", 409), ok(CHARGE)]

    async def run() -> None:
        async with make_async_client(script, fake_time) as c:
            await c.payments.refund("pay_1", amount=100)

    with pytest.raises(IdempotencyConflictError):
        asyncio.run(run())
    assert len(script.requests) == 1
