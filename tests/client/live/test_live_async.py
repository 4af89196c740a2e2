"""The AsyncClient against the running sandbox: every payment endpoint, concurrency, pages."""

from __future__ import annotations

import asyncio
import uuid

import pytest

from tests.client.live.target import Live
from workbench._client import AsyncClient
from workbench._exceptions import NotFoundError, PaymentStateError
from workbench.tracking import await_for_refund


def _order() -> str:
    return f"order-{uuid.uuid4().hex[:12]}"


def _async_client(live: Live, **kwargs: object) -> AsyncClient:
    return AsyncClient(live.api_key, live.secret_key, live.base_url, **kwargs)  # type: ignore[arg-type]


def test_every_payment_endpoint_async(live: Live) -> None:
    async def run() -> None:
        async with _async_client(live) as client:
            await client.sandbox.reset()
            session = await client.sessions.create(
                transaction_id=_order(), amount=5_000, return_url="https://shop.example/r"
            )
            assert session.status == "active"
            assert session.amount == 5_000

            auth = await client.payments.charge_card(
                transaction_id=_order(),
                amount=8_000,
                card_token="tok_test_success",
                capture=False,
            )
            assert auth.status == "authorized"
            captured = await client.payments.capture(auth.payment_id)
            assert captured.refundable_amount == 8_000
            refund = await client.payments.refund(auth.payment_id, amount=3_000)
            assert (refund.refund_amount, refund.refundable_amount) == (3_000, 5_000)
            payment = await client.payments.retrieve(auth.payment_id)
            assert payment.refund_amount == 3_000
            public = await client.payments.public_status(auth.payment_id)
            assert public.status == "captured"
            with pytest.raises(PaymentStateError):
                await client.payments.void(auth.payment_id)

            other = await client.payments.charge_card(
                transaction_id=_order(),
                amount=8_000,
                card_token="tok_test_success",
                capture=False,
            )
            voided = await client.payments.void(other.payment_id, reason="changed mind")
            assert voided.status == "voided"

            challenge = await client.payments.charge_card(
                transaction_id=_order(), amount=9_000, card_token="tok_test_3ds_challenge"
            )
            assert challenge.correlation_id
            answer = await client.sandbox.answer_challenge(
                challenge.payment_id, challenge.correlation_id
            )
            done = await client.payments.complete_3ds(
                challenge.payment_id, pares=answer.pares, correlation_id=challenge.correlation_id
            )
            assert done.status == "captured"

            slow = await client.payments.charge_card(
                transaction_id=_order(), amount=6_000, card_token="tok_test_refund_async"
            )
            pending = await client.payments.refund(slow.payment_id)
            assert pending.in_flight
            settled = await await_for_refund(
                client, pending, timeout=20, between=client.sandbox.settle
            )
            assert not settled.in_flight
            assert settled.refundable_amount == 0

            with pytest.raises(NotFoundError):
                await client.payments.retrieve("pay_nope")

    asyncio.run(run())


def test_concurrent_charges_each_get_their_own_key(live: Live) -> None:
    async def run() -> list[str | None]:
        async with _async_client(live) as client:
            await client.sandbox.reset()
            charges = await asyncio.gather(
                *(
                    client.payments.charge_card(
                        transaction_id=_order(), amount=1_000 + i, card_token="tok_test_success"
                    )
                    for i in range(20)
                )
            )
            assert sorted(c.amount for c in charges) == [1_000 + i for i in range(20)]
            assert len({c.payment_id for c in charges}) == 20
            return [c.idempotency_key for c in charges]

    keys = asyncio.run(run())
    assert len(set(keys)) == 20


def test_async_retry_on_fail_next(live: Live) -> None:
    async def run() -> int:
        async with _async_client(live) as client:
            await client.sandbox.reset()
            await client.sandbox.fail_next("500")
            charge = await client.payments.charge_card(
                transaction_id=_order(), amount=1_000, card_token="tok_test_success"
            )
            return charge.retries

    assert asyncio.run(run()) == 1
