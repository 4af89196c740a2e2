"""The tables every feature shares.

The merchant's identity (``merchants``, ``stores``, ``api_keys``), its customers and
card vault (``customers``, ``card_tokens``, ``saved_cards``), idempotency records,
events and their deliveries, reconciler leases and rate limits live here, and storage's
``meta`` table is reached from here too. Each feature package keeps its own tables in its
``tables`` module, on the one `workbench.sandbox.storage.metadata`;
`workbench.sandbox.schema` lists them all, in the order the migrations create them.
"""

from __future__ import annotations

import sqlalchemy as sa

from workbench.sandbox.storage import UTCDateTime, meta, metadata

__all__ = [
    "address_buckets",
    "api_keys",
    "card_tokens",
    "customers",
    "event_deliveries",
    "events",
    "id_column",
    "idempotency_records",
    "leases",
    "merchant_column",
    "merchants",
    "meta",
    "rate_buckets",
    "rate_limits",
    "saved_cards",
    "stores",
]


def id_column(name: str = "id") -> sa.Column[str]:
    """A ``String(64)`` primary key (``id`` unless named otherwise)."""
    return sa.Column(name, sa.String(64), primary_key=True)


def merchant_column() -> sa.Column[str]:
    """The owning merchant: ``merchant_id``, a foreign key to ``merchants``, never null."""
    return sa.Column("merchant_id", sa.String(64), sa.ForeignKey("merchants.id"), nullable=False)


merchants = sa.Table(
    "merchants",
    metadata,
    id_column(),
    sa.Column("name", sa.String(200), nullable=False),
    sa.Column("clock_offset_us", sa.BigInteger, nullable=False, default=0),
    sa.Column("fail_next", sa.String(32)),
    sa.Column("latency_ms", sa.Integer, nullable=False, default=0),
    # When it was made (schema 6; NULL for a merchant made before, the built-ins' first).
    sa.Column("created_at", UTCDateTime),
)

stores = sa.Table(
    "stores",
    metadata,
    id_column(),
    merchant_column(),
    sa.Column("name", sa.String(200), nullable=False),
    sa.Column("webhook_url", sa.Text),
    # Sealed (`workbench.sandbox.merchant_secrets`), as is ``api_keys.secret_key``.
    sa.Column("webhook_secret", sa.String(128), nullable=False),
)

api_keys = sa.Table(
    "api_keys",
    metadata,
    sa.Column("api_key", sa.String(128), primary_key=True),
    sa.Column("secret_key", sa.String(256), nullable=False),
    merchant_column(),
    sa.Column("store_id", sa.String(64), sa.ForeignKey("stores.id"), nullable=False),
    sa.Column("revoked", sa.Boolean, nullable=False, default=False),
)

customers = sa.Table(
    "customers",
    metadata,
    id_column(),
    merchant_column(),
    sa.Column("name", sa.String(200), nullable=False),
    sa.Column("email", sa.String(200)),
)

card_tokens = sa.Table(
    "card_tokens",
    metadata,
    sa.Column("token", sa.String(80), primary_key=True),
    # NULL for the built-in test tokens, which every merchant may use.
    sa.Column("merchant_id", sa.String(64), sa.ForeignKey("merchants.id")),
    sa.Column("behaviour", sa.String(40), nullable=False),
    sa.Column("brand", sa.String(40), nullable=False),
    sa.Column("card_type", sa.String(40), nullable=False),
    sa.Column("bin", sa.String(6), nullable=False),
    sa.Column("last4", sa.String(4), nullable=False),
    sa.Column("created_at", UTCDateTime, nullable=False),
    # How many digits the card number has (12-19), for its mask; NULL on a token stored
    # before schema version 2, whose mask then shows 16 digits.
    sa.Column("number_length", sa.SmallInteger),
)

saved_cards = sa.Table(
    "saved_cards",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    merchant_column(),
    sa.Column("customer_id", sa.String(64), sa.ForeignKey("customers.id"), nullable=False),
    sa.Column("token", sa.String(80), nullable=False),
    sa.Column("is_default", sa.Boolean, nullable=False, default=False),
    sa.UniqueConstraint("customer_id", "token"),
)

idempotency_records = sa.Table(
    "idempotency_records",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("api_key", sa.String(128), nullable=False),
    sa.Column("endpoint", sa.Text, nullable=False),
    sa.Column("key", sa.String(255), nullable=False),
    merchant_column(),
    sa.Column("fingerprint", sa.String(64), nullable=False),
    sa.Column("state", sa.String(12), nullable=False),
    sa.Column("locked_until", UTCDateTime, nullable=False),
    sa.Column("status_code", sa.Integer),
    sa.Column("body", sa.LargeBinary),
    sa.Column("request_id", sa.String(64)),
    # A provisional (202) answer: the kind and id of the object whose state to report.
    sa.Column("provisional_kind", sa.String(20)),
    sa.Column("provisional_id", sa.String(64)),
    sa.Column("created_at", UTCDateTime, nullable=False),
    sa.Column("expires_at", UTCDateTime, nullable=False),
    sa.UniqueConstraint("api_key", "endpoint", "key"),
)

events = sa.Table(
    "events",
    metadata,
    sa.Column("seq", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("id", sa.String(64), nullable=False, unique=True),
    merchant_column(),
    sa.Column("store_id", sa.String(64), nullable=False),
    sa.Column("type", sa.String(60), nullable=False),
    sa.Column("payload", sa.LargeBinary, nullable=False),
    sa.Column("target_url", sa.Text),
    sa.Column("delivery_state", sa.String(20), nullable=False),
    sa.Column("attempts", sa.Integer, nullable=False, default=0),
    sa.Column("next_attempt_at", UTCDateTime),
    sa.Column("last_error", sa.String(300)),
    sa.Column("created_at", UTCDateTime, nullable=False),
    sa.Column("delivered_at", UTCDateTime),
    # Wall clock: until when the attempt under way holds the event (`events.WebhookWork`).
    sa.Column("claimed_until", UTCDateTime),
)

event_deliveries = sa.Table(
    "event_deliveries",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("event_id", sa.String(64), sa.ForeignKey("events.id"), nullable=False),
    merchant_column(),
    sa.Column("attempt", sa.Integer, nullable=False),
    sa.Column("attempted_at", UTCDateTime, nullable=False),
    sa.Column("status_code", sa.Integer),
    sa.Column("error", sa.String(300)),
    # Schema 7: where the attempt went, the receiver's time to answer, its answer's start.
    sa.Column("target_url", sa.Text),
    sa.Column("latency_ms", sa.Integer),
    sa.Column("response_excerpt", sa.String(300)),
)

leases = sa.Table(
    "leases",
    metadata,
    sa.Column("name", sa.String(64), primary_key=True),
    sa.Column("holder", sa.String(64), nullable=False),
    sa.Column("expires_at", UTCDateTime, nullable=False),
)

# A merchant's own rate limit (set by a control route), shared by every worker.
rate_limits = sa.Table(
    "rate_limits",
    metadata,
    sa.Column("merchant_id", sa.String(64), sa.ForeignKey("merchants.id"), primary_key=True),
    sa.Column("per_second", sa.Float, nullable=False),
    sa.Column("burst", sa.Integer, nullable=False),
)

# Token buckets of a PostgreSQL sandbox, whose workers count one limit together.
rate_buckets = sa.Table(
    "rate_buckets",
    metadata,
    sa.Column("merchant_id", sa.String(64), sa.ForeignKey("merchants.id"), primary_key=True),
    sa.Column("api_key", sa.String(128), primary_key=True),
    sa.Column("tokens", sa.Float, nullable=False),
    sa.Column("updated_at", UTCDateTime, nullable=False),
)

# Token buckets per client address of the routes that take no signature (schema 3),
# counted in the database when several processes serve it, as `rate_buckets` are.
address_buckets = sa.Table(
    "address_buckets",
    metadata,
    sa.Column("address", sa.String(64), primary_key=True),
    sa.Column("tokens", sa.Float, nullable=False),
    sa.Column("updated_at", UTCDateTime, nullable=False),
)
