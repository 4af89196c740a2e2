"""The buyer portal: ``/v1/public/subscriptions/{hash}``, sent without a signature.

The subscription's ``publicHash`` is the bearer; these calls are what a
buyer-facing page makes, and they need no merchant keys.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Unpack

from workbench import models
from workbench._options import CallOptions, RequestOptions
from workbench.resources._base import AsyncResource, SyncResource, compact, segment

if TYPE_CHECKING:
    from workbench.models import PublicCancellation, PublicSubscription, UpdateCardSession

__all__ = ["AsyncPortal", "Portal"]


def _path(public_hash: str, tail: str = "") -> str:
    return f"/v1/public/subscriptions/{segment(public_hash, 'public_hash')}{tail}"


def _cancel(public_hash: str, at_period_end: bool | None, key: str | None) -> RequestOptions:
    body = compact(atPeriodEnd=at_period_end)
    return RequestOptions(
        "POST",
        _path(public_hash, "/cancel"),
        body,
        signed=False,
        idempotency_key=key,
        action="public_cancel",
        object_id=public_hash,
    )


def _update_card(public_hash: str, key: str | None) -> RequestOptions:
    # The answer describes the new checkout session, not the subscription's state.
    return RequestOptions(
        "POST",
        _path(public_hash, "/update-card-session"),
        {},
        signed=False,
        idempotency_key=key,
        action="update_card_session",
        object_id=public_hash,
        state_field=None,
    )


def _retrieve(public_hash: str) -> RequestOptions:
    return RequestOptions(
        "GET", _path(public_hash), signed=False, action="retrieve", object_id=public_hash
    )


class Portal(SyncResource):
    """The buyer portal of a subscription."""

    def retrieve(self, public_hash: str, **options: Unpack[CallOptions]) -> PublicSubscription:
        """The buyer's view of the subscription.

        Args:
            public_hash: the subscription's ``public_hash`` (from the merchant, in the portal link).

        Returns:
            What the buyer may see of the subscription.
        """
        return self._client.request(_retrieve(public_hash), models.PublicSubscription, **options)

    def cancel(
        self,
        public_hash: str,
        *,
        at_period_end: bool | None = None,
        idempotency_key: str | None = None,
        **options: Unpack[CallOptions],
    ) -> PublicCancellation:
        """Cancel as the buyer; the service's default is at the end of the period.

        Args:
            public_hash: the subscription's ``public_hash`` (from the merchant, in the portal link).
            at_period_end: ``False`` to cancel now; the service's default if omitted.
            idempotency_key: reuse a key to make a retry safe; generated if omitted.

        Returns:
            The cancellation as the buyer sees it.
        """
        return self._client.request(
            _cancel(public_hash, at_period_end, idempotency_key),
            models.PublicCancellation,
            **options,
        )

    def update_card_session(
        self,
        public_hash: str,
        *,
        idempotency_key: str | None = None,
        **options: Unpack[CallOptions],
    ) -> UpdateCardSession:
        """Open a ``card_update_only`` checkout session for the buyer.

        Args:
            public_hash: the subscription's ``public_hash`` (from the merchant, in the portal link).
            idempotency_key: reuse a key to make a retry safe; generated if omitted.

        Returns:
            The session whose ``checkout_url`` lets the buyer enter a new card.
        """
        return self._client.request(
            _update_card(public_hash, idempotency_key), models.UpdateCardSession, **options
        )


class AsyncPortal(AsyncResource):
    """The buyer portal of a subscription (async)."""

    async def retrieve(
        self, public_hash: str, **options: Unpack[CallOptions]
    ) -> PublicSubscription:
        """The buyer's view of the subscription."""
        return await self._client.request(
            _retrieve(public_hash), models.PublicSubscription, **options
        )

    async def cancel(
        self,
        public_hash: str,
        *,
        at_period_end: bool | None = None,
        idempotency_key: str | None = None,
        **options: Unpack[CallOptions],
    ) -> PublicCancellation:
        """Cancel as the buyer; the service's default is at the end of the period."""
        return await self._client.request(
            _cancel(public_hash, at_period_end, idempotency_key),
            models.PublicCancellation,
            **options,
        )

    async def update_card_session(
        self,
        public_hash: str,
        *,
        idempotency_key: str | None = None,
        **options: Unpack[CallOptions],
    ) -> UpdateCardSession:
        """Open a ``card_update_only`` checkout session for the buyer."""
        return await self._client.request(
            _update_card(public_hash, idempotency_key), models.UpdateCardSession, **options
        )
