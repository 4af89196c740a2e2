"""The ``sessions`` table: hosted-checkout sessions, their terms, state and first answer;
and ``transaction_ids``, the merchant transactionIds taken by a payment or a session.

A session's ``transactionId`` is also the card charge's that pays it, which is how a
charge finds the session's terms and callback (`workbench.sandbox.payments.service`).
Whichever of a session and a payment takes a transactionId first writes its row in
``transaction_ids``, whose primary key is the one lock both contend for
(`workbench.sandbox.sessions.service.take_transaction_id`) on PostgreSQL; SQLite's
writers take turns, and it stays empty there.
"""

from __future__ import annotations

import sqlalchemy as sa

from workbench.sandbox.storage import UTCDateTime, metadata
from workbench.sandbox.tables import id_column, merchant_column

__all__ = ["sessions", "transaction_ids"]

sessions = sa.Table(
    "sessions",
    metadata,
    id_column(),
    merchant_column(),
    sa.Column("store_id", sa.String(64), nullable=False),
    sa.Column("transaction_id", sa.String(64)),
    sa.Column("fingerprint", sa.String(64)),
    sa.Column("mode", sa.String(20), nullable=False),
    sa.Column("status", sa.String(20), nullable=False),
    sa.Column("amount", sa.BigInteger, nullable=False),
    sa.Column("currency", sa.String(3), nullable=False),
    sa.Column("description", sa.Text),
    sa.Column("return_url", sa.Text, nullable=False),
    sa.Column("callback_url", sa.Text),
    sa.Column("installment_enabled", sa.Boolean, nullable=False, default=False),
    sa.Column("customer_id", sa.String(64)),
    sa.Column("subscription_id", sa.String(64)),
    sa.Column("splits", sa.JSON),
    sa.Column("checkout_url", sa.Text, nullable=False),
    sa.Column("payment_id", sa.String(64)),
    sa.Column("response_body", sa.LargeBinary),
    sa.Column("created_at", UTCDateTime, nullable=False),
    sa.Column("expires_at", UTCDateTime, nullable=False),
    sa.Column("completed_at", UTCDateTime),
    sa.UniqueConstraint("merchant_id", "transaction_id"),
)

transaction_ids = sa.Table(
    "transaction_ids",
    metadata,
    merchant_column(),
    sa.Column("transaction_id", sa.String(64), nullable=False),
    sa.PrimaryKeyConstraint("merchant_id", "transaction_id"),
)
