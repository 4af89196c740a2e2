"""Models: tolerant of new fields and statuses, strict about money, aware UTC timestamps."""

from __future__ import annotations

from datetime import UTC, datetime

import httpx2
import pydantic
import pytest

from tests.client import samples
from tests.client.script import Script, ok
from workbench import models
from workbench._client import Client
from workbench.money import format_try


def test_unknown_fields_are_kept_and_new_statuses_accepted() -> None:
    body = {**samples.PAYMENT, "status": "partially_refunded", "riskScore": 12}
    payment = models.Payment.model_validate(body)
    assert payment.status == "partially_refunded"
    assert payment.model_extra == {"riskScore": 12}


def test_timestamps_are_aware_utc() -> None:
    payment = models.Payment.model_validate(
        {**samples.PAYMENT, "createdAt": "2026-03-14T12:26:53+03:00"}
    )
    assert payment.created_at == datetime(2026, 3, 14, 9, 26, 53, tzinfo=UTC)
    assert payment.created_at.utcoffset() is not None
    assert payment.completed_at is not None
    assert payment.completed_at.tzinfo is UTC


@pytest.mark.parametrize("amount", [125.0, "12500", 125.5])
def test_amounts_are_integers_never_floats(amount: object) -> None:
    with pytest.raises(pydantic.ValidationError):
        models.Payment.model_validate({**samples.PAYMENT, "amount": amount})


def test_money_formats_in_lira() -> None:
    payment = models.Payment.model_validate({**samples.PAYMENT, "amount": 123456})
    assert format_try(payment.amount) == "1.234,56 TL"


def test_snake_case_attributes_over_camel_case_wire() -> None:
    sub = models.Subscription.model_validate(samples.SUBSCRIPTION)
    assert sub.amount_minor == 9900
    assert sub.public_hash == "ph_abc"
    assert sub.card_last4 == "0001"
    assert sub.model_dump(by_alias=True, exclude_none=True, mode="json") == samples.SUBSCRIPTION


def test_list_items_parse_with_their_subset() -> None:
    sub = models.Subscription.model_validate(samples.LIST_ITEM)
    assert sub.public_hash is None
    assert sub.cycle_number is None


def test_refund_202_is_in_flight_not_an_error(client: Client, script: Script) -> None:
    body = {
        **samples.REFUND,
        "lastRefund": {**samples.REFUND["lastRefund"], "status": "pending", "completedAt": None},
    }
    script.replies = [ok(body, status=202)]
    result = client.payments.refund("pay_1", amount=2500)
    assert result.in_flight
    assert result.http_status == 202
    assert result.idempotency_key is not None


def test_refund_200_is_settled(client: Client, script: Script) -> None:
    script.replies = [ok(samples.REFUND)]
    result = client.payments.refund("pay_1", amount=2500)
    assert not result.in_flight
    assert result.last_refund is not None
    assert result.last_refund.status == "completed"


def test_challenge_pending_charge_requires_action() -> None:
    pending = models.CardCharge.model_validate(
        {
            "paymentId": "pay_1",
            "status": "pending_3ds",
            "amount": 100,
            "currency": "TRY",
            "correlationId": "cor_1",
            "acsUrl": "http://127.0.0.1/acs",
            "challengeHint": "1234",
        }
    )
    assert pending.requires_action
    assert pending.acs_url == "http://127.0.0.1/acs"
    assert pending.model_extra == {"challengeHint": "1234"}
    assert not models.CardCharge.model_validate(samples.CHARGE).requires_action


def test_a_charge_and_a_retrieved_payment_both_name_the_payment_id() -> None:
    charge = models.CardCharge.model_validate(samples.CHARGE)
    payment = models.Payment.model_validate({**samples.CHARGE, "id": charge.payment_id})
    assert charge.id == charge.payment_id == payment.id
    assert "id" not in charge.model_dump(by_alias=True)  # the answer's shape is unchanged


def test_raw_response_is_reachable(client: Client, script: Script) -> None:
    script.replies = [
        httpx2.Response(201, json=samples.CHARGE, headers={"X-Request-Id": "r-9", "X-Extra": "1"})
    ]
    charge = client.payments.charge_card(
        transaction_id="o", amount=12500, card_token="tok_test_success"
    )
    info = charge.response
    assert info is not None
    assert info.status_code == 201
    assert info.headers["X-Extra"] == "1"
    assert info.request_id == "r-9"
    assert info.method == "POST"
    assert info.path == "/v1/payments/card"
    assert info.http_response.status_code == 201
    assert not info.replayed


def test_a_success_body_that_is_not_json_is_not_the_api(client: Client, script: Script) -> None:
    from workbench._exceptions import UnexpectedResponseError

    script.replies = [httpx2.Response(200, text="<html>", headers={"X-Request-Id": "r-1"})]
    with pytest.raises(UnexpectedResponseError, match="HTTP 200 with an HTML page"):
        client.payments.retrieve("pay_1")


def test_a_success_body_of_json_but_not_an_object_is_an_api_error(
    client: Client, script: Script
) -> None:
    from workbench._exceptions import APIError

    script.replies = [httpx2.Response(200, json=[1], headers={"X-Request-Id": "r-1"})]
    with pytest.raises(APIError, match="not a JSON object"):
        client.payments.retrieve("pay_1")
