"""Payments and sessions against the running sandbox: every endpoint, the spec's fields."""

from __future__ import annotations

import re
import uuid
from datetime import UTC, datetime

import pytest

from tests.client.live.target import Live
from workbench import models
from workbench._client import Client
from workbench._exceptions import (
    CardDeclinedError,
    InsufficientFundsError,
    PaymentStateError,
    RefundAmountError,
    ThreeDSecureFailedError,
)
from workbench.tracking import Tracker, allowed_actions, wait_for_refund

MASK = re.compile(r"^\d{6}\*+\d{4}$")


def _order() -> str:
    return f"order-{uuid.uuid4().hex[:12]}"


def _is_recent(moment: datetime | None) -> bool:
    assert moment is not None
    assert moment.tzinfo is not None
    return abs((datetime.now(UTC) - moment).total_seconds()) < 600


def test_session_create(client: Client) -> None:
    session = client.sessions.create(
        transaction_id=_order(),
        amount=12_500,
        return_url="https://shop.example/done",
        description="Kahve",
        installment_enabled=True,
    )
    assert uuid.UUID(session.session_id)
    assert session.session_id in session.checkout_url
    assert session.expires_at > datetime.now(UTC)
    assert session.merchant_id == "mrc_demo0001"
    assert session.amount == 12_500
    assert session.currency == "TRY"
    assert session.status == "active"
    assert session.http_status == 201
    assert session.request_id


def test_charge_retrieve_and_public_status(client: Client) -> None:
    order = _order()
    charge = client.payments.charge_card(
        transaction_id=order, amount=12_500, card_token="tok_test_success", installment_count=3
    )
    assert charge.payment_id.startswith("pay_")
    assert charge.status == "captured"
    assert charge.amount == 12_500
    assert charge.currency == "TRY"
    assert charge.commission is not None
    assert charge.net_amount == charge.amount - charge.commission
    assert charge.card_mask is not None
    assert MASK.match(charge.card_mask)
    assert charge.card_brand
    assert charge.card_type
    assert charge.installment_count == 3
    assert charge.three_d_secure is True
    assert charge.auth_code
    assert _is_recent(charge.created_at)
    assert _is_recent(charge.completed_at)
    assert not charge.requires_action

    payment = client.payments.retrieve(charge.payment_id)
    assert payment.id == charge.payment_id
    assert payment.merchant_id == "mrc_demo0001"
    assert payment.transaction_id == order
    assert payment.status == "captured"
    assert (payment.amount, payment.commission, payment.net_amount) == (
        charge.amount,
        charge.commission,
        charge.net_amount,
    )
    assert payment.bin is not None
    assert payment.card_mask is not None
    assert payment.card_mask.startswith(payment.bin)
    assert (payment.refund_amount, payment.refundable_amount) == (0, 12_500)
    assert payment.idempotency_key is None
    assert allowed_actions(payment) == ["refund"]

    public = client.payments.public_status(charge.payment_id)
    assert (public.payment_id, public.status) == (charge.payment_id, "captured")
    assert public.model_extra == {}


def test_same_key_replays_the_charge(client: Client) -> None:
    order = _order()
    key = str(uuid.uuid4())
    first = client.payments.charge_card(
        transaction_id=order, amount=500, card_token="tok_test_success", idempotency_key=key
    )
    again = client.payments.charge_card(
        transaction_id=order, amount=500, card_token="tok_test_success", idempotency_key=key
    )
    assert again.payment_id == first.payment_id
    assert again.request_id == first.request_id
    assert first.response is not None
    assert again.response is not None
    assert not first.response.replayed
    assert again.response.replayed
    assert again.http_status == first.http_status


def test_preauth_capture_then_refunds(client: Client) -> None:
    tracker = Tracker(client)
    auth = client.payments.charge_card(
        transaction_id=_order(), amount=20_000, card_token="tok_test_success", capture=False
    )
    assert auth.status == "authorized"
    assert allowed_actions(auth) == ["capture", "void"]
    captured = client.payments.capture(auth.payment_id)
    assert captured.id == auth.payment_id
    assert captured.status == "captured"
    assert captured.refundable_amount == captured.amount == 20_000
    assert captured.net_amount is not None
    assert captured.completed_at is not None
    repeat = client.payments.capture(auth.payment_id)
    assert repeat.status == "captured"

    refund = client.payments.refund(auth.payment_id, amount=5_000, reason="one cup broken")
    assert refund.http_status == 200
    assert not refund.in_flight
    assert refund.payment_id == auth.payment_id
    assert (refund.refund_amount, refund.refundable_amount) == (5_000, 15_000)
    assert refund.last_refund is not None
    assert refund.last_refund.refund_id.startswith("rfn_")
    assert refund.last_refund.status == "completed"
    assert refund.last_refund.amount == 5_000
    assert refund.last_refund.bank_refund_id
    assert _is_recent(refund.last_refund.completed_at)

    with pytest.raises(RefundAmountError) as info:
        client.payments.refund(auth.payment_id, amount=15_001)
    assert info.value.retries == 0
    with pytest.raises(PaymentStateError):
        client.payments.void(auth.payment_id)

    rest = client.payments.refund(auth.payment_id)
    assert rest.refundable_amount == 0
    assert tracker.states(auth.payment_id) == ["authorized", "captured"]
    assert tracker.mermaid(auth.payment_id).splitlines()[1:3] == [
        "    [*] --> authorized: 1. charge",
        "    authorized --> captured: 2. capture",
    ]


def test_void_and_its_event(client: Client) -> None:
    auth = client.payments.charge_card(
        transaction_id=_order(), amount=7_500, card_token="tok_test_success", capture=False
    )
    voided = client.payments.void(auth.payment_id, reason="customer cancelled")
    assert (voided.id, voided.status, voided.amount, voided.currency) == (
        auth.payment_id,
        "voided",
        7_500,
        "TRY",
    )
    assert client.payments.void(auth.payment_id).status == "voided"
    assert allowed_actions(voided) == []
    events = client.sandbox.events(type="payment.voided").items
    assert [e.data.get("reason") for e in events] == ["customer cancelled"]
    with pytest.raises(PaymentStateError):
        client.payments.capture(auth.payment_id)


def test_in_flight_refund_settles(client: Client) -> None:
    charge = client.payments.charge_card(
        transaction_id=_order(), amount=9_000, card_token="tok_test_refund_async"
    )
    first = client.payments.refund(charge.payment_id, amount=4_000)
    assert first.http_status == 202
    assert first.in_flight
    assert first.last_refund is not None
    assert first.last_refund.status != "completed"
    settled = wait_for_refund(client, first, timeout=20, between=client.sandbox.settle)
    assert settled.http_status == 200
    assert not settled.in_flight
    assert settled.idempotency_key == first.idempotency_key
    assert settled.last_refund is not None
    assert settled.last_refund.refund_id == first.last_refund.refund_id
    assert settled.last_refund.status == "completed"


def test_three_d_secure_challenge(client: Client) -> None:
    charge = client.payments.charge_card(
        transaction_id=_order(), amount=15_000, card_token="tok_test_3ds_challenge"
    )
    assert charge.requires_action
    assert charge.status == "pending_3ds"
    assert charge.correlation_id
    assert charge.acs_url
    answer = client.sandbox.answer_challenge(charge.payment_id, charge.correlation_id)
    assert answer.result == "Y"
    done = client.payments.complete_3ds(
        charge.payment_id, pares=answer.pares, correlation_id=charge.correlation_id
    )
    assert (done.id, done.status, done.amount, done.currency) == (
        charge.payment_id,
        "captured",
        15_000,
        "TRY",
    )
    assert done.auth_code
    assert done.commission is not None
    assert done.net_amount == 15_000 - done.commission
    assert done.completed_at is not None
    again = client.payments.complete_3ds(
        charge.payment_id, pares=answer.pares, correlation_id=charge.correlation_id
    )
    assert again.model_dump() == done.model_dump()


def test_three_d_secure_failure(client: Client) -> None:
    charge = client.payments.charge_card(
        transaction_id=_order(), amount=15_000, card_token="tok_test_3ds_fail"
    )
    assert charge.correlation_id
    answer = client.sandbox.answer_challenge(charge.payment_id, charge.correlation_id)
    assert answer.result == "N"
    with pytest.raises(ThreeDSecureFailedError):
        client.payments.complete_3ds(
            charge.payment_id, pares=answer.pares, correlation_id=charge.correlation_id
        )


@pytest.mark.parametrize(
    ("token", "error"),
    [
        ("tok_test_declined", CardDeclinedError),
        ("tok_test_insufficient_funds", InsufficientFundsError),
    ],
)
def test_declines_are_typed(client: Client, token: str, error: type) -> None:
    with pytest.raises(error) as info:
        client.payments.charge_card(transaction_id=_order(), amount=1_000, card_token=token)
    assert info.value.http_status == 400
    assert info.value.request_id
    assert info.value.retries == 0


def test_tokenize_then_charge(client: Client) -> None:
    card = client.sandbox.fixtures().test_cards[0]
    assert card.number
    token = client.cards.tokenize(
        card_number=card.number, expiry_month=12, expiry_year=2030, cvc="123"
    )
    assert token.token.startswith("tok_")
    assert token.last4 == card.number[-4:]
    charge = client.payments.charge_card(
        transaction_id=_order(), amount=1_000, card_token=token.token
    )
    assert charge.status == "captured"


def test_fixtures_and_controls(client: Client, live: Live) -> None:
    fixtures = client.sandbox.fixtures()
    assert fixtures.merchant_id == "mrc_demo0001"
    assert fixtures.webhook_secret
    assert {c.token for c in fixtures.test_cards} >= {
        "tok_test_success",
        "tok_test_3ds_challenge",
        "tok_test_refund_async",
    }
    before = fixtures.business_time
    assert before is not None
    moved = client.sandbox.advance_clock(3_600)
    assert (moved.business_time - before).total_seconds() >= 3_600
    assert isinstance(client.sandbox.tick().processed, dict)
    assert client.sandbox.settle().settled == 0
    assert client.sandbox.set_latency(0).latency_ms == 0
    assert client.sandbox.set_rate_limit(None).per_second is None
    assert isinstance(client.sandbox.reset(), models.ResetResult)
