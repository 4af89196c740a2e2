"""A payment's events: recorded in the caller's transaction, addressed to its webhook."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import sqlalchemy as sa

from workbench.sandbox import events
from workbench.sandbox.storage import AnyRow

__all__ = ["emit"]


def emit(
    conn: sa.Connection,
    row: AnyRow | dict[str, Any],
    type: str,
    now: datetime,
    *,
    store_webhook: str | None = None,
    store_webhook_read: bool = False,
    **extra: Any,
) -> None:
    """Record a payment event for the session's callback, else the store's webhook
    (``store_webhook`` when the caller has read it already, looked up otherwise)."""
    r = row if isinstance(row, dict) else row._asdict()
    data = {
        "paymentId": r["id"],
        "transactionId": r["transaction_id"],
        "status": r["status"],
        "amount": r["amount"],
        "currency": r["currency"],
        **extra,
    }
    events.emit(
        conn,
        merchant_id=r["merchant_id"],
        store_id=r["store_id"],
        type=type,
        data=data,
        now=now,
        target_url=r["callback_url"] or store_webhook,
        look_up_webhook=not store_webhook_read,
    )
