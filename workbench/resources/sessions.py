"""Hosted-checkout sessions: ``POST /v1/payments/sessions``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Unpack

from workbench import models
from workbench._options import CallOptions, RequestOptions
from workbench.resources._base import AsyncResource, SyncResource, compact, kurus

if TYPE_CHECKING:
    from workbench.models import CheckoutSession

__all__ = ["AsyncSessions", "Sessions"]


def _create(
    *,
    transaction_id: str,
    return_url: str,
    amount: int | None,
    currency: str,
    description: str | None,
    callback_url: str | None,
    installment_enabled: bool | None,
    customer_id: str | None,
    mode: str | None,
    splits: Sequence[Mapping[str, Any]] | None,
    idempotency_key: str | None,
) -> RequestOptions:
    body = compact(
        transactionId=transaction_id,
        amount=None if amount is None else kurus(amount),
        currency=currency,
        description=description,
        returnUrl=return_url,
        callbackUrl=callback_url,
        installmentEnabled=installment_enabled,
        customerId=customer_id,
        mode=mode,
        splits=None if splits is None else [dict(s) for s in splits],
    )
    return RequestOptions(
        "POST",
        "/v1/payments/sessions",
        body,
        idempotency_key=idempotency_key,
        action="create",
        id_field="sessionId",
    )


class Sessions(SyncResource):
    """Hosted-checkout sessions."""

    def create(
        self,
        *,
        transaction_id: str,
        return_url: str,
        amount: int | None = None,
        currency: str = "TRY",
        description: str | None = None,
        callback_url: str | None = None,
        installment_enabled: bool | None = None,
        customer_id: str | None = None,
        mode: str | None = None,
        splits: Sequence[Mapping[str, Any]] | None = None,
        idempotency_key: str | None = None,
        **options: Unpack[CallOptions],
    ) -> CheckoutSession:
        """Create a hosted-checkout session.

        Args:
            transaction_id: the merchant's transaction id, unique per merchant.
            return_url: where the buyer is sent back after paying (or failing).
            amount: kuruş, at least 100 for modes ``payment`` and ``qr``; omit for
                ``card_update_only``.
            currency: always ``TRY``.
            description: shown on the checkout page.
            callback_url: webhook address for this payment (overrides the store's).
            installment_enabled: show the installment picker.
            customer_id: bind the session to a saved customer.
            mode: ``payment`` (default), ``qr`` or ``card_update_only``.
            splits: marketplace splits, items ``{"submerchantId", "amountMinor"}``.
            idempotency_key: reuse a key to make a retry safe; generated if omitted.

        Returns:
            The session, with the ``checkout_url`` to send the buyer to.
        """
        return self._client.request(
            _create(
                transaction_id=transaction_id,
                return_url=return_url,
                amount=amount,
                currency=currency,
                description=description,
                callback_url=callback_url,
                installment_enabled=installment_enabled,
                customer_id=customer_id,
                mode=mode,
                splits=splits,
                idempotency_key=idempotency_key,
            ),
            models.CheckoutSession,
            **options,
        )


class AsyncSessions(AsyncResource):
    """Hosted-checkout sessions (async)."""

    async def create(
        self,
        *,
        transaction_id: str,
        return_url: str,
        amount: int | None = None,
        currency: str = "TRY",
        description: str | None = None,
        callback_url: str | None = None,
        installment_enabled: bool | None = None,
        customer_id: str | None = None,
        mode: str | None = None,
        splits: Sequence[Mapping[str, Any]] | None = None,
        idempotency_key: str | None = None,
        **options: Unpack[CallOptions],
    ) -> CheckoutSession:
        """Create a hosted-checkout session; see `Sessions.create`."""
        return await self._client.request(
            _create(
                transaction_id=transaction_id,
                return_url=return_url,
                amount=amount,
                currency=currency,
                description=description,
                callback_url=callback_url,
                installment_enabled=installment_enabled,
                customer_id=customer_id,
                mode=mode,
                splits=splits,
                idempotency_key=idempotency_key,
            ),
            models.CheckoutSession,
            **options,
        )
