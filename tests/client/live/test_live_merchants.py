"""``client.sandbox.create_merchant``: a merchant of your own, and a client ready for it.

Against the live sandbox: the new client charges as the new merchant, the demo client
does not see its payment, the secret never shows in a ``repr``, and the merchant can be
listed and deleted (its keys then refused), with the blocking and the async client.
"""

from __future__ import annotations

import uuid

import pytest

from tests.client.live.target import Live
from workbench import APIKeyError, AsyncClient, Client, NotFoundError


def _charge(client: Client) -> str:
    charge = client.payments.charge_card(
        transaction_id=f"order-{uuid.uuid4()}", amount=12_500, card_token="tok_test_success"
    )
    return charge.payment_id


def test_a_new_merchant_comes_with_a_client_signed_for_it(client: Client) -> None:
    mine = client.sandbox.create_merchant(name="client test")
    assert mine.merchant_id.startswith("mrc_")
    assert mine.client.sandbox.fixtures().merchant_id == mine.merchant_id
    paid = _charge(mine.client)
    with pytest.raises(NotFoundError):
        client.payments.retrieve(paid)
    assert mine.client.payments.retrieve(paid).status == "captured"
    for shown in (repr(mine), str(mine), repr(mine.client)):
        assert mine.secret_key not in shown
        assert mine.webhook_secret not in shown
    listed = {m.merchant_id: m for m in client.sandbox.list_merchants().items}
    assert listed[mine.merchant_id].name == "client test"
    assert listed[mine.merchant_id].built_in is False
    gone = mine.client.sandbox.delete_merchant(mine.merchant_id)
    assert gone.deleted["payments"] == 1
    with pytest.raises(APIKeyError):
        mine.client.payments.retrieve(paid)
    assert client.sandbox.fixtures().merchant_id == "mrc_demo0001"  # the maker's keys still work


@pytest.mark.anyio
async def test_the_async_client_makes_one_too(live: Live) -> None:
    async with AsyncClient(live.api_key, live.secret_key, live.base_url) as client:
        mine = await client.sandbox.create_merchant()
        assert isinstance(mine.client, AsyncClient)
        fixtures = await mine.client.sandbox.fixtures()
        assert fixtures.merchant_id == mine.merchant_id
        assert len(fixtures.customers) == 3
        await client.sandbox.delete_merchant(mine.merchant_id)
        with pytest.raises(APIKeyError):
            await mine.client.sandbox.fixtures()
