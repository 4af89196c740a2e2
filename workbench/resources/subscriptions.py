"""Recurring subscriptions on saved cards."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any, Unpack

from workbench import models
from workbench._options import CallOptions, RequestOptions
from workbench._pagination import AsyncPager, SyncPager
from workbench.resources._base import (
    AsyncResource,
    SyncResource,
    compact,
    kurus,
    segment,
    timestamp,
    token,
)

if TYPE_CHECKING:
    from workbench.models import (
        ChargeReceipt,
        Subscription,
        SubscriptionCancellation,
        SubscriptionChargeList,
        SubscriptionPage,
        SubscriptionUpdate,
    )

__all__ = ["AsyncSubscriptions", "Subscriptions"]

_BASE = "/v1/subscriptions"


def _create(
    *,
    store_id: str,
    customer_id: str,
    amount_minor: int,
    interval_count: int,
    interval_unit: str,
    currency: str,
    card_token: str | None,
    trial_end_at: datetime | str | None,
    generate_invoices: bool | None,
    description: str | None,
    idempotency_key: str | None,
) -> RequestOptions:
    body = compact(
        storeId=store_id,
        customerId=customer_id,
        amountMinor=kurus(amount_minor, "amount_minor"),
        currency=currency,
        intervalCount=interval_count,
        intervalUnit=interval_unit,
        cardToken=None if card_token is None else token(card_token),
        trialEndAt=timestamp(trial_end_at),
        generateInvoices=generate_invoices,
        description=description,
    )
    return RequestOptions(
        "POST",
        _BASE,
        body,
        idempotency_key=idempotency_key,
        action="create",
        id_field="id",
        alias_field="publicHash",
    )


def _list(filters: dict[str, Any], cursor: str | None) -> RequestOptions:
    return RequestOptions("GET", _BASE, params={**filters, "cursor": cursor}, action="list")


def _filters(
    store_id: str | None,
    customer_id: str | None,
    status: str | None,
    limit: int | None,
    created_from: datetime | str | None,
    created_to: datetime | str | None,
) -> dict[str, Any]:
    if limit is not None and limit < 1:
        raise ValueError("limit must be >= 1")
    return {
        "storeId": store_id,
        "customerId": customer_id,
        "status": status,
        "limit": limit,
        "from": timestamp(created_from),
        "to": timestamp(created_to),
    }


def _path(subscription_id: str, tail: str = "") -> str:
    return f"{_BASE}/{segment(subscription_id, 'subscription_id')}{tail}"


def _retrieve(subscription_id: str) -> RequestOptions:
    return RequestOptions(
        "GET",
        _path(subscription_id),
        action="retrieve",
        object_id=subscription_id,
        alias_field="publicHash",
    )


def _charges(subscription_id: str) -> RequestOptions:
    path = _path(subscription_id, "/charges")
    return RequestOptions("GET", path, action="charges", object_id=subscription_id)


def _post(
    subscription_id: str,
    action: str,
    body: dict[str, Any],
    idempotency_key: str | None,
    *,
    state: str | None = None,
) -> RequestOptions:
    return RequestOptions(
        "POST",
        _path(subscription_id, "/" + action.replace("_", "-")),
        body,
        idempotency_key=idempotency_key,
        action=action,
        object_id=subscription_id,
        state=state,
    )


def _cancel(
    subscription_id: str, at_period_end: bool, reason: str | None, idempotency_key: str | None
) -> RequestOptions:
    body = compact(atPeriodEnd=at_period_end, reason=reason)
    return _post(subscription_id, "cancel", body, idempotency_key)


def _charge_now(subscription_id: str, idempotency_key: str | None) -> RequestOptions:
    # The receipt's own status is the queue's ("queuing"); the subscription is charging.
    return _post(subscription_id, "charge_now", {}, idempotency_key, state="charging")


class Subscriptions(SyncResource):
    """Recurring subscriptions."""

    def create(
        self,
        *,
        store_id: str,
        customer_id: str,
        amount_minor: int,
        interval_count: int,
        interval_unit: str,
        currency: str = "TRY",
        card_token: str | None = None,
        trial_end_at: datetime | str | None = None,
        generate_invoices: bool | None = None,
        description: str | None = None,
        idempotency_key: str | None = None,
        **options: Unpack[CallOptions],
    ) -> Subscription:
        """Create a subscription; the result carries the buyer portal's ``public_hash``.

        Args:
            store_id: the ``sto_`` store.
            customer_id: the ``cus_`` customer.
            amount_minor: kuruş per cycle.
            interval_count: interval units per cycle.
            interval_unit: ``day``, ``week``, ``month`` or ``year``.
            currency: always ``TRY``.
            card_token: a ``tok_`` token; the customer's default card if omitted.
            trial_end_at: an aware datetime (or ``Z`` text) ending a trial.
            generate_invoices: invoice each renewal.
            description: free text.
            idempotency_key: reuse a key to make a retry safe; generated if omitted.

        Returns:
            The subscription, ``active`` or ``trialing``.
        """
        return self._client.request(
            _create(
                store_id=store_id,
                customer_id=customer_id,
                amount_minor=amount_minor,
                interval_count=interval_count,
                interval_unit=interval_unit,
                currency=currency,
                card_token=card_token,
                trial_end_at=trial_end_at,
                generate_invoices=generate_invoices,
                description=description,
                idempotency_key=idempotency_key,
            ),
            models.Subscription,
            **options,
        )

    def list(
        self,
        *,
        store_id: str | None = None,
        customer_id: str | None = None,
        status: str | None = None,
        limit: int | None = None,
        created_from: datetime | str | None = None,
        created_to: datetime | str | None = None,
        max_items: int | None = None,
        **options: Unpack[CallOptions],
    ) -> SyncPager[Subscription]:
        """Every matching subscription, fetched page by page as you iterate.

        Args:
            store_id: only this store's.
            customer_id: only this customer's.
            status: only those in this status.
            limit: the page size asked of the service.
            created_from: the ``from`` filter.
            created_to: the ``to`` filter.
            max_items: stop after this many items.

        Returns:
            A pager: iterate it for every item, or call ``.pages()`` for each page.
        """
        filters = _filters(store_id, customer_id, status, limit, created_from, created_to)
        return SyncPager(
            lambda cursor: self.list_page(filters, cursor, **options), max_items=max_items
        )

    def list_page(
        self,
        filters: dict[str, Any],
        cursor: str | None = None,
        **options: Unpack[CallOptions],
    ) -> SubscriptionPage:
        """One page of the listing, for those who handle cursors themselves.

        Args:
            filters: the service's query parameters (``storeId``, ``status``...).
            cursor: the previous page's ``next_cursor``; ``None`` for the first page.

        Returns:
            One page and the cursor of the next.
        """
        return self._client.request(_list(filters, cursor), models.SubscriptionPage, **options)

    def retrieve(self, subscription_id: str, **options: Unpack[CallOptions]) -> Subscription:
        """Read a subscription.

        Args:
            subscription_id: the ``sub_`` id.

        Returns:
            The subscription as the service holds it now.
        """
        return self._client.request(_retrieve(subscription_id), models.Subscription, **options)

    def charges(
        self, subscription_id: str, **options: Unpack[CallOptions]
    ) -> SubscriptionChargeList:
        """The charges made for a subscription.

        Args:
            subscription_id: the ``sub_`` id.

        Returns:
            Every charge made for the subscription.
        """
        return self._client.request(
            _charges(subscription_id), models.SubscriptionChargeList, **options
        )

    def cancel(
        self,
        subscription_id: str,
        *,
        at_period_end: bool,
        reason: str | None = None,
        idempotency_key: str | None = None,
        **options: Unpack[CallOptions],
    ) -> SubscriptionCancellation:
        """Cancel now (``at_period_end=False``) or when the paid period ends.

        Args:
            subscription_id: the ``sub_`` id.
            at_period_end: ``True`` to stop at the end of the paid period.
            reason: free text kept with the cancellation.
            idempotency_key: reuse a key to make a retry safe; generated if omitted.

        Returns:
            The subscription's status now and whether it ends at the period's end.

        Raises:
            SubscriptionStateError: the subscription is already final (SVC-SUB-4090).
        """
        return self._client.request(
            _cancel(subscription_id, at_period_end, reason, idempotency_key),
            models.SubscriptionCancellation,
            **options,
        )

    def pause(
        self,
        subscription_id: str,
        *,
        idempotency_key: str | None = None,
        **options: Unpack[CallOptions],
    ) -> SubscriptionUpdate:
        """Pause an active or trialing subscription.

        Args:
            subscription_id: the ``sub_`` id.
            idempotency_key: reuse a key to make a retry safe; generated if omitted.

        Returns:
            The subscription's new status.

        Raises:
            SubscriptionStateError: the status does not allow a pause (SVC-SUB-4090).
        """
        return self._client.request(
            _post(subscription_id, "pause", {}, idempotency_key),
            models.SubscriptionUpdate,
            **options,
        )

    def resume(
        self,
        subscription_id: str,
        *,
        idempotency_key: str | None = None,
        **options: Unpack[CallOptions],
    ) -> SubscriptionUpdate:
        """Resume a paused subscription; the next reconciler tick charges it.

        Args:
            subscription_id: the ``sub_`` id.
            idempotency_key: reuse a key to make a retry safe; generated if omitted.

        Returns:
            The subscription's new status.

        Raises:
            SubscriptionStateError: the subscription is not paused (SVC-SUB-4090).
        """
        return self._client.request(
            _post(subscription_id, "resume", {}, idempotency_key),
            models.SubscriptionUpdate,
            **options,
        )

    def retry(
        self,
        subscription_id: str,
        *,
        idempotency_key: str | None = None,
        **options: Unpack[CallOptions],
    ) -> SubscriptionUpdate:
        """Ask for a past-due subscription's charge to be retried on the next tick.

        Args:
            subscription_id: the ``sub_`` id.
            idempotency_key: reuse a key to make a retry safe; generated if omitted.

        Returns:
            The subscription's status (still ``past_due`` until the retry runs).

        Raises:
            SubscriptionStateError: the subscription is not past due (SVC-SUB-4090).
        """
        return self._client.request(
            _post(subscription_id, "retry", {}, idempotency_key),
            models.SubscriptionUpdate,
            **options,
        )

    def charge_now(
        self,
        subscription_id: str,
        *,
        idempotency_key: str | None = None,
        **options: Unpack[CallOptions],
    ) -> ChargeReceipt:
        """Queue an immediate charge; poll until the status leaves ``charging``.

        Args:
            subscription_id: the ``sub_`` id.
            idempotency_key: reuse a key to make a retry safe; generated if omitted.

        Returns:
            The receipt of the queued charge (status ``charging``).

        Raises:
            SubscriptionStateError: the status does not allow a charge (SVC-SUB-4090).
        """
        return self._client.request(
            _charge_now(subscription_id, idempotency_key), models.ChargeReceipt, **options
        )


class AsyncSubscriptions(AsyncResource):
    """Recurring subscriptions (async); see `Subscriptions` for each method's documentation."""

    async def create(
        self,
        *,
        store_id: str,
        customer_id: str,
        amount_minor: int,
        interval_count: int,
        interval_unit: str,
        currency: str = "TRY",
        card_token: str | None = None,
        trial_end_at: datetime | str | None = None,
        generate_invoices: bool | None = None,
        description: str | None = None,
        idempotency_key: str | None = None,
        **options: Unpack[CallOptions],
    ) -> Subscription:
        """Create a subscription; see `Subscriptions.create`."""
        return await self._client.request(
            _create(
                store_id=store_id,
                customer_id=customer_id,
                amount_minor=amount_minor,
                interval_count=interval_count,
                interval_unit=interval_unit,
                currency=currency,
                card_token=card_token,
                trial_end_at=trial_end_at,
                generate_invoices=generate_invoices,
                description=description,
                idempotency_key=idempotency_key,
            ),
            models.Subscription,
            **options,
        )

    def list(
        self,
        *,
        store_id: str | None = None,
        customer_id: str | None = None,
        status: str | None = None,
        limit: int | None = None,
        created_from: datetime | str | None = None,
        created_to: datetime | str | None = None,
        max_items: int | None = None,
        **options: Unpack[CallOptions],
    ) -> AsyncPager[Subscription]:
        """Every matching subscription: ``async for sub in client.subscriptions.list()``."""
        filters = _filters(store_id, customer_id, status, limit, created_from, created_to)
        return AsyncPager(
            lambda cursor: self.list_page(filters, cursor, **options), max_items=max_items
        )

    async def list_page(
        self,
        filters: dict[str, Any],
        cursor: str | None = None,
        **options: Unpack[CallOptions],
    ) -> SubscriptionPage:
        """One page of the listing, for those who handle cursors themselves."""
        return await self._client.request(
            _list(filters, cursor), models.SubscriptionPage, **options
        )

    async def retrieve(self, subscription_id: str, **options: Unpack[CallOptions]) -> Subscription:
        """Read a subscription."""
        return await self._client.request(
            _retrieve(subscription_id), models.Subscription, **options
        )

    async def charges(
        self, subscription_id: str, **options: Unpack[CallOptions]
    ) -> SubscriptionChargeList:
        """The charges made for a subscription."""
        return await self._client.request(
            _charges(subscription_id), models.SubscriptionChargeList, **options
        )

    async def cancel(
        self,
        subscription_id: str,
        *,
        at_period_end: bool,
        reason: str | None = None,
        idempotency_key: str | None = None,
        **options: Unpack[CallOptions],
    ) -> SubscriptionCancellation:
        """Cancel now or at period end; see `Subscriptions.cancel`."""
        return await self._client.request(
            _cancel(subscription_id, at_period_end, reason, idempotency_key),
            models.SubscriptionCancellation,
            **options,
        )

    async def pause(
        self,
        subscription_id: str,
        *,
        idempotency_key: str | None = None,
        **options: Unpack[CallOptions],
    ) -> SubscriptionUpdate:
        """Pause an active or trialing subscription."""
        return await self._client.request(
            _post(subscription_id, "pause", {}, idempotency_key),
            models.SubscriptionUpdate,
            **options,
        )

    async def resume(
        self,
        subscription_id: str,
        *,
        idempotency_key: str | None = None,
        **options: Unpack[CallOptions],
    ) -> SubscriptionUpdate:
        """Resume a paused subscription."""
        return await self._client.request(
            _post(subscription_id, "resume", {}, idempotency_key),
            models.SubscriptionUpdate,
            **options,
        )

    async def retry(
        self,
        subscription_id: str,
        *,
        idempotency_key: str | None = None,
        **options: Unpack[CallOptions],
    ) -> SubscriptionUpdate:
        """Ask for a past-due subscription's charge to be retried."""
        return await self._client.request(
            _post(subscription_id, "retry", {}, idempotency_key),
            models.SubscriptionUpdate,
            **options,
        )

    async def charge_now(
        self,
        subscription_id: str,
        *,
        idempotency_key: str | None = None,
        **options: Unpack[CallOptions],
    ) -> ChargeReceipt:
        """Queue an immediate charge."""
        return await self._client.request(
            _charge_now(subscription_id, idempotency_key), models.ChargeReceipt, **options
        )
