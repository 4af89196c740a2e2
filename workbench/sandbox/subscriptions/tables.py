"""The subscription tables, on the sandbox's one `MetaData` so ``create_all`` and reset see them.

A subscription's schedule is ``anchor_at`` plus ``periods`` intervals: the next
renewal is computed from the anchor every time, never from the previous renewal,
so month-end clamping does not drift (Jan 31 -> Feb 28 -> Mar 31).

``next_charge_at`` is the one "when is this due" column the reconciler reads; it is
``NULL`` whenever nothing is due (paused, cancelled, expired), so the due-work query
is a range scan on ``(merchant_id, next_charge_at)``.
"""

from __future__ import annotations

import sqlalchemy as sa

from workbench.sandbox.storage import UTCDateTime, metadata

__all__ = ["subscription_charges", "subscriptions"]

subscriptions = sa.Table(
    "subscriptions",
    metadata,
    # Insertion order: the keyset of the list (stable under concurrent inserts).
    sa.Column("seq", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("id", sa.String(64), nullable=False, unique=True),
    sa.Column("merchant_id", sa.String(64), sa.ForeignKey("merchants.id"), nullable=False),
    sa.Column("store_id", sa.String(64), nullable=False),
    sa.Column("customer_id", sa.String(64), nullable=False),
    # SHA-256 of the publicHash: the bearer itself is shown once, on creation.
    sa.Column("public_hash_sha256", sa.String(64), nullable=False, unique=True),
    sa.Column("status", sa.String(20), nullable=False),
    sa.Column("amount_minor", sa.BigInteger, nullable=False),
    sa.Column("currency", sa.String(3), nullable=False),
    sa.Column("interval_count", sa.Integer, nullable=False),
    sa.Column("interval_unit", sa.String(8), nullable=False),
    sa.Column("cycle_number", sa.Integer, nullable=False),
    sa.Column("anchor_at", UTCDateTime, nullable=False),
    sa.Column("periods", sa.Integer, nullable=False),
    sa.Column("next_charge_at", UTCDateTime),
    sa.Column("trial_end_at", UTCDateTime),
    sa.Column("trial_notice_at", UTCDateTime),
    sa.Column("past_due_since", UTCDateTime),
    sa.Column("attempts", sa.Integer, nullable=False, default=0),
    sa.Column("claim_id", sa.Integer),
    sa.Column("card_token", sa.String(80), nullable=False),
    sa.Column("card_last4", sa.String(4), nullable=False),
    sa.Column("card_brand", sa.String(40), nullable=False),
    sa.Column("cancel_at_period_end", sa.Boolean, nullable=False, default=False),
    sa.Column("cancel_reason", sa.String(500)),
    sa.Column("generate_invoices", sa.Boolean, nullable=False, default=False),
    sa.Column("description", sa.String(500)),
    sa.Column("created_at", UTCDateTime, nullable=False),
    sa.Column("ended_at", UTCDateTime),
    sa.Index("ix_subscriptions_due", "merchant_id", "next_charge_at"),
    sa.Index("ix_subscriptions_notice", "merchant_id", "trial_notice_at"),
    sa.Index("ix_subscriptions_list", "merchant_id", "seq"),
    # Filtered pages walk their own keyset instead of skipping non-matching rows.
    sa.Index("ix_subscriptions_list_status", "merchant_id", "status", "seq"),
    sa.Index("ix_subscriptions_list_customer", "merchant_id", "customer_id", "seq"),
    sa.Index("ix_subscriptions_list_store", "merchant_id", "store_id", "seq"),
)

subscription_charges = sa.Table(
    "subscription_charges",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("merchant_id", sa.String(64), sa.ForeignKey("merchants.id"), nullable=False),
    sa.Column("subscription_id", sa.String(64), sa.ForeignKey("subscriptions.id"), nullable=False),
    sa.Column("cycle_number", sa.Integer, nullable=False),
    # The card charge's transactionId: the fence that makes a resumed claim charge once.
    sa.Column("transaction_id", sa.String(64), nullable=False),
    sa.Column("kind", sa.String(20), nullable=False),
    sa.Column("state", sa.String(12), nullable=False),
    sa.Column("amount_minor", sa.BigInteger, nullable=False),
    sa.Column("due_at", UTCDateTime, nullable=False),
    sa.Column("payment_id", sa.String(64)),
    sa.Column("payment_status", sa.String(20)),
    sa.Column("charged_at", UTCDateTime),
    sa.UniqueConstraint("merchant_id", "transaction_id"),
    sa.Index("ix_subscription_charges_sub", "subscription_id", "id"),
    sa.Index("ix_subscription_charges_state", "merchant_id", "state"),
)
