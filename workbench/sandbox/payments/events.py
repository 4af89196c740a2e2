"""A payment's events: recorded in the caller's transaction, addressed to its webhook."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import sqlalchemy as sa

from workbench.sandbox import events
from workbench.sandbox.storage import AnyRow
from workbench.spec.events import event_type

__all__ = ["emit"]


def emit(
    conn: sa.Connection,
    row: AnyRow,
    type: str,
    now: datetime,
    *,
    store_webhook: str | None = None,
    store_webhook_read: bool = False,
    **extra: Any,
) -> None:
    """Record a payment event for the session's callback, else the store's webhook
    (``store_webhook`` when the caller has read it already, looked up otherwise).

    ``type`` names its definition in `workbench.spec.events`; ``extra`` are that
    definition's own fields (``reason``, ``method``) by their Python names."""
    data = event_type(type).data(
        payment_id=row.id,
        transaction_id=row.transaction_id,
        status=row.status,
        amount=row.amount,
        currency=row.currency,
        **extra,
    )
    events.emit(
        conn,
        merchant_id=row.merchant_id,
        store_id=row.store_id,
        data=data,
        now=now,
        target_url=row.callback_url or store_webhook,
        look_up_webhook=not store_webhook_read,
    )
