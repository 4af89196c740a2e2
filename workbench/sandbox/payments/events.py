"""A payment's events: recorded in the caller's transaction, addressed to its webhook."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import sqlalchemy as sa

from workbench.sandbox import events
from workbench.sandbox.storage import AnyRow
from workbench.spec.events import EventData, event_type

__all__ = ["emit", "payment_data"]


def payment_data(row: AnyRow, type: str, **extra: Any) -> EventData:
    """A payment event's ``data``: ``type`` names its definition in
    `workbench.spec.events`; ``extra`` are that definition's own fields (``reason``,
    ``method``) by their Python names."""
    return event_type(type).data(
        payment_id=row.id,
        transaction_id=row.transaction_id,
        status=row.status,
        amount=row.amount,
        currency=row.currency,
        **extra,
    )


def emit(conn: sa.Connection, row: AnyRow, type: str, now: datetime, **extra: Any) -> None:
    """Record a payment event for the session's callback, else the store's webhook
    (looked up; the card charge, which read it with its other reads, records its events
    through `workbench.sandbox.events.emit` with `payment_data` itself)."""
    events.emit(
        conn,
        merchant_id=row.merchant_id,
        store_id=row.store_id,
        data=payment_data(row, type, **extra),
        now=now,
        target_url=row.callback_url,
    )
