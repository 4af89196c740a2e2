"""The sandbox's schema: every table of every feature, on one `MetaData`, in one list.

Each feature package keeps its tables in its own ``tables`` module, on the shared
`workbench.sandbox.storage.metadata`; this module, above the features, imports every
one of them, so that `metadata` is complete whatever else was imported, and lists them
in `TABLES`, in the order a new database creates them (the order they were always
created in: a table's place among those it does not depend on is its place here).
Storage knows no feature: the composition root gives `TABLES` to the migrations
(`workbench.sandbox.storage.migrations.open_schema`) and to the reset command, and a
merchant's reset empties them (`workbench.sandbox.control`). A new table goes at the
end of `TABLES`.
"""

from __future__ import annotations

import sqlalchemy as sa

from workbench.sandbox.accepted_signatures import accepted_signatures
from workbench.sandbox.payments.tables import payments
from workbench.sandbox.refunds.tables import refunds
from workbench.sandbox.requestlog.tables import request_log
from workbench.sandbox.sessions.tables import sessions, transaction_ids
from workbench.sandbox.storage import metadata
from workbench.sandbox.subscriptions.tables import subscription_charges, subscriptions
from workbench.sandbox.tables import (
    address_buckets,
    api_keys,
    card_tokens,
    customers,
    event_deliveries,
    events,
    idempotency_records,
    leases,
    merchants,
    meta,
    rate_buckets,
    rate_limits,
    saved_cards,
    stores,
)

__all__ = ["TABLES", "metadata"]

#: Every table of the sandbox, in creation order.
TABLES: tuple[sa.Table, ...] = (
    meta,
    merchants,
    stores,
    api_keys,
    customers,
    card_tokens,
    saved_cards,
    sessions,
    payments,
    refunds,
    idempotency_records,
    events,
    event_deliveries,
    leases,
    rate_limits,
    rate_buckets,
    accepted_signatures,
    subscriptions,
    subscription_charges,
    address_buckets,
    transaction_ids,
    request_log,
)
