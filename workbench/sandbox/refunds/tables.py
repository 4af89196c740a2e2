"""The ``refunds`` table: one row per refund of a payment, ``pending`` until it settles."""

from __future__ import annotations

import sqlalchemy as sa

from workbench.sandbox.storage import UTCDateTime, metadata
from workbench.sandbox.tables import id_column, merchant_column

__all__ = ["refunds"]

refunds = sa.Table(
    "refunds",
    metadata,
    id_column(),
    merchant_column(),
    sa.Column("payment_id", sa.String(64), sa.ForeignKey("payments.id"), nullable=False),
    sa.Column("amount", sa.BigInteger, nullable=False),
    sa.Column("reason", sa.String(500)),
    sa.Column("status", sa.String(20), nullable=False),
    sa.Column("bank_refund_id", sa.String(64)),
    sa.Column("created_at", UTCDateTime, nullable=False),
    sa.Column("settle_at", UTCDateTime),
    sa.Column("completed_at", UTCDateTime),
)
