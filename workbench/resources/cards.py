"""Card tokenization: ``POST /v1/cards/tokens`` (its shape is the sandbox's decision).

This is the one call that carries a card number. The client never logs a
request body, and the number is not kept anywhere but in the request itself;
every other call takes the ``tok_`` token only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Unpack

from workbench import models
from workbench._options import CallOptions, RequestOptions
from workbench.resources._base import AsyncResource, SyncResource, compact

if TYPE_CHECKING:
    from workbench.models import CardToken

__all__ = ["AsyncCards", "Cards"]


def _tokenize(
    card_number: str,
    expiry_month: int,
    expiry_year: int,
    cvc: str,
    cardholder_name: str | None,
    idempotency_key: str | None,
) -> RequestOptions:
    body = compact(
        cardNumber=card_number.replace(" ", "").replace("-", ""),
        expiryMonth=expiry_month,
        expiryYear=expiry_year,
        cvc=cvc,
        cardholderName=cardholder_name,
    )
    return RequestOptions(
        "POST", "/v1/cards/tokens", body, idempotency_key=idempotency_key, action="tokenize"
    )


class Cards(SyncResource):
    """Card tokenization."""

    def tokenize(
        self,
        *,
        card_number: str,
        expiry_month: int,
        expiry_year: int,
        cvc: str,
        cardholder_name: str | None = None,
        idempotency_key: str | None = None,
        **options: Unpack[CallOptions],
    ) -> CardToken:
        """Exchange a card for a ``tok_`` vault token to charge or save.

        Args:
            card_number: the card number (spaces and dashes are removed).
            expiry_month: 1 to 12.
            expiry_year: four digits.
            cvc: three or four digits.
            cardholder_name: as printed on the card.
            idempotency_key: reuse a key to make a retry safe; generated if omitted.

        Returns:
            The token and what may be shown of the card (mask, brand, type).

        Raises:
            InvalidRequestError: the number fails the Luhn check or the card has expired.
        """
        return self._client.request(
            _tokenize(
                card_number, expiry_month, expiry_year, cvc, cardholder_name, idempotency_key
            ),
            models.CardToken,
            **options,
        )


class AsyncCards(AsyncResource):
    """Card tokenization (async)."""

    async def tokenize(
        self,
        *,
        card_number: str,
        expiry_month: int,
        expiry_year: int,
        cvc: str,
        cardholder_name: str | None = None,
        idempotency_key: str | None = None,
        **options: Unpack[CallOptions],
    ) -> CardToken:
        """Exchange a card for a ``tok_`` vault token; see `Cards.tokenize`."""
        return await self._client.request(
            _tokenize(
                card_number, expiry_month, expiry_year, cvc, cardholder_name, idempotency_key
            ),
            models.CardToken,
            **options,
        )
