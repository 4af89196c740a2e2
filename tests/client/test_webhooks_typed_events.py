"""`construct_event` and `parse_event` type an event by its type, an unknown one stays generic."""

from __future__ import annotations

import json
import logging
import typing
from datetime import UTC, datetime
from typing import Any

import pytest

from workbench.signing import format_timestamp, sign_request
from workbench.spec.events import EVENT_TYPES, EventData
from workbench.webhooks import (
    EVENT_CLASSES,
    PaymentCaptured,
    SubscriptionPastDue,
    WebhookEvent,
    WebhookPayloadError,
    construct_event,
    parse_event,
)

SECRET = "whsec_test_unit_typed_0001"
NOW = datetime(2026, 3, 14, 9, 26, 53, tzinfo=UTC)


def _envelope(event_type: str, data: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": "evt_0123456789abcdef01234567",
        "type": event_type,
        "createdAt": "2026-03-14T09:26:50Z",
        "merchantId": "mrc_demo0001",
        "data": data,
    }


def _body(event_type: str, data: dict[str, Any]) -> bytes:
    return json.dumps(_envelope(event_type, data)).encode()


def test_every_event_type_the_sandbox_sends_has_its_class_over_its_definition() -> None:
    assert set(EVENT_CLASSES) == set(EVENT_TYPES)
    for name, cls in EVENT_CLASSES.items():
        assert cls.model_fields["data"].annotation is EVENT_TYPES[name].data, name
        assert typing.get_args(cls.model_fields["type"].annotation) == (name,)
        assert cls.__name__ + "Data" == EVENT_TYPES[name].data.__name__


@pytest.mark.parametrize("name", sorted(EVENT_TYPES))
def test_each_example_parses_to_its_typed_event(name: str) -> None:
    example = EVENT_TYPES[name].example
    event = parse_event(_body(name, example.wire()))
    assert type(event) is EVENT_CLASSES[name]
    assert isinstance(event, WebhookEvent)
    assert type(event.data) is EVENT_TYPES[name].data
    assert event.data == example
    assert event.data.wire() == example.wire()


def test_a_delivery_verified_by_construct_event_is_typed_with_typed_fields() -> None:
    data = EVENT_TYPES["subscription.past_due"].example.wire()
    body = _body("subscription.past_due", data)
    signed = sign_request(
        api_key="webhook",
        secret_key=SECRET,
        method="POST",
        url="/webhooks",
        body=body,
        timestamp=format_timestamp(NOW),
    )
    headers = {"X-Timestamp": signed.timestamp, "X-Signature": signed.signature}
    event = construct_event(body, headers, SECRET, path="/webhooks", now=NOW)
    assert isinstance(event, SubscriptionPastDue)
    assert event.data.amount_minor == 9_900
    assert event.data.next_charge_at == datetime(2026, 2, 2, 9, 0, tzinfo=UTC)
    assert all(moment.tzinfo is UTC for moment in event.data.retry_schedule)
    assert event.object_id == event.data.subscription_id
    assert event.raw == body


def test_typed_data_still_reads_like_the_json_object_it_came_from() -> None:
    event = parse_event(
        _body(
            "payment.captured",
            {
                "paymentId": "pay_1",
                "transactionId": "ord-1",
                "status": "captured",
                "amount": 125_050,
                "currency": "TRY",
            },
        )
    )
    assert isinstance(event, PaymentCaptured)
    assert event.data.amount == 125_050
    assert event.data["amount"] == 125_050
    assert event.data.get("paymentId") == "pay_1"
    assert event.data.get("subscriptionId") is None  # not sent: not there
    assert "subscriptionId" not in event.data
    with pytest.raises(KeyError):
        event.data["subscriptionId"]
    assert event.object_id == "pay_1"


def test_a_field_a_newer_service_adds_is_kept() -> None:
    data = {**EVENT_TYPES["refund.settled"].example.wire(), "bankRefundId": "bnk_1"}
    event = parse_event(_body("refund.settled", data))
    assert event.data["bankRefundId"] == "bnk_1"
    assert event.data.model_extra == {"bankRefundId": "bnk_1"}


def test_an_unknown_type_is_a_generic_event_never_an_error() -> None:
    event = parse_event(_body("payout.paid", {"payoutId": "po_1", "amount": 5}))
    assert type(event) is WebhookEvent
    assert event.type == "payout.paid"
    assert event.data == {"payoutId": "po_1", "amount": 5}
    assert event.object_id is None


def test_a_known_type_whose_data_does_not_fit_comes_back_generic_and_is_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    data = {**EVENT_TYPES["payment.captured"].example.wire(), "amount": "150.00"}
    with caplog.at_level(logging.WARNING, logger="workbench.webhooks"):
        event = parse_event(_body("payment.captured", data))
    assert type(event) is WebhookEvent
    assert event.data["amount"] == "150.00"
    assert "payment.captured" in caplog.text
    assert "data.amount" in caplog.text
    assert "150.00" not in caplog.text  # the field, never its value


def test_a_body_that_is_no_event_is_still_refused() -> None:
    with pytest.raises(WebhookPayloadError, match="check createdAt"):
        parse_event(json.dumps({"id": "evt_1", "type": "payment.captured"}))


def test_the_typed_models_are_the_definitions_the_sandbox_emits_through() -> None:
    for entry in EVENT_TYPES.values():
        assert issubclass(entry.data, EventData)
        assert entry.data.event_type == entry.name
