"""The ``payments`` table: one row per payment, its card, state, amounts and first answers.

``response_body`` is the charge's first answer (the ``transactionId`` fence replays its
shape), ``threeds_body`` the 3-D Secure callback's; ``refunded_amount`` and
``pending_refund_amount`` are kept here so a refund decides on the locked payment row.
"""

from __future__ import annotations

import sqlalchemy as sa

from workbench.sandbox.storage import UTCDateTime, metadata
from workbench.sandbox.tables import id_column, merchant_column

__all__ = ["payments"]

payments = sa.Table(
    "payments",
    metadata,
    id_column(),
    merchant_column(),
    sa.Column("store_id", sa.String(64), nullable=False),
    sa.Column("transaction_id", sa.String(64), nullable=False),
    sa.Column("fingerprint", sa.String(64), nullable=False),
    sa.Column("status", sa.String(20), nullable=False),
    sa.Column("amount", sa.BigInteger, nullable=False),
    sa.Column("currency", sa.String(3), nullable=False),
    sa.Column("commission", sa.BigInteger, nullable=False),
    sa.Column("net_amount", sa.BigInteger, nullable=False),
    sa.Column("card_token", sa.String(80), nullable=False),
    sa.Column("behaviour", sa.String(40), nullable=False),
    sa.Column("card_mask", sa.String(19), nullable=False),
    sa.Column("card_brand", sa.String(40), nullable=False),
    sa.Column("card_type", sa.String(40), nullable=False),
    sa.Column("bin", sa.String(6), nullable=False),
    sa.Column("installment_count", sa.Integer, nullable=False),
    sa.Column("three_d_secure", sa.Boolean, nullable=False),
    sa.Column("capture", sa.Boolean, nullable=False),
    sa.Column("auth_code", sa.String(12)),
    sa.Column("correlation_id", sa.String(64)),
    sa.Column("customer_id", sa.String(64)),
    sa.Column("save_card", sa.Boolean, nullable=False, default=False),
    sa.Column("callback_url", sa.Text),
    sa.Column("refunded_amount", sa.BigInteger, nullable=False, default=0),
    sa.Column("pending_refund_amount", sa.BigInteger, nullable=False, default=0),
    sa.Column("void_reason", sa.String(500)),
    sa.Column("decline_code", sa.String(20)),
    sa.Column("response_status", sa.Integer, nullable=False),
    sa.Column("response_body", sa.LargeBinary, nullable=False),
    sa.Column("threeds_status", sa.Integer),
    sa.Column("threeds_body", sa.LargeBinary),
    sa.Column("created_at", UTCDateTime, nullable=False),
    sa.Column("completed_at", UTCDateTime),
    sa.UniqueConstraint("merchant_id", "transaction_id"),
)
