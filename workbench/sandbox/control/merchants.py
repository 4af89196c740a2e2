"""Merchants on demand: made, listed and deleted, each isolated from every other.

A merchant is the sandbox's unit of isolation and of business time: its store, key
pair, webhook secret, customers with their saved test cards, and clock are its own,
and nothing another merchant does (a reset, a clock advance) touches them. The rules:

1. `create_merchant` writes the merchant, its store, its key pair and its customers in
   the caller's one transaction, so a failure midway leaves nothing behind. The secret
   key and the webhook secret are stored sealed; the answer holds them in clear, the
   only time they are shown.
2. `list_merchants` shows each merchant's id, name, when it was made and when it was
   last used (its latest idempotency record or event, both kept with wall-clock times),
   never a secret.
3. `delete_merchant` deletes every row of the merchant, dependents first, its keys
   included: the key cache empties itself on that write (`KeyCache.watch`), in every
   process serving an SQLite file, and a PostgreSQL worker confirms a kept key against
   the database before acting on it, so the keys stop working at once everywhere.
   The built-in merchants (`BUILT_IN_MERCHANTS`) are never deleted.
"""

from __future__ import annotations

import functools
import secrets
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.sql.ddl import sort_tables

from workbench.sandbox import tables
from workbench.sandbox.clock import iso
from workbench.sandbox.fixtures import BUILT_IN_MERCHANTS, customers_for
from workbench.sandbox.ids import new_id
from workbench.sandbox.merchant_secrets import seal_secret_key, seal_webhook_secret
from workbench.sandbox.payments import expiry
from workbench.sandbox.reconciler import lease_name
from workbench.sandbox.sealing import Sealer
from workbench.spec import IdPrefix

__all__ = [
    "BuiltInMerchant",
    "NewMerchant",
    "create_merchant",
    "delete_merchant",
    "list_merchants",
    "merchant_exists",
]

#: The name a merchant made without one gets.
DEFAULT_NAME = "Scratch merchant"


class BuiltInMerchant(Exception):
    """The merchant is one of the built-in ones, which stay."""


@dataclass(frozen=True, slots=True)
class NewMerchant:
    """A merchant just made, with its secrets in clear (shown once, kept out of ``repr``)."""

    merchant_id: str
    name: str
    store_id: str
    api_key: str
    created_at: datetime
    customers: tuple[str, ...]
    secret_key: str = field(repr=False)
    webhook_secret: str = field(repr=False)

    def as_json(self) -> dict[str, Any]:
        """The creation's answer."""
        return {
            "merchantId": self.merchant_id,
            "name": self.name,
            "storeId": self.store_id,
            "apiKey": self.api_key,
            "secretKey": self.secret_key,
            "webhookSecret": self.webhook_secret,
            "customers": list(self.customers),
            "created": iso(self.created_at),
        }


def create_merchant(
    conn: sa.Connection, name: str | None, sealer: Sealer, now: datetime
) -> NewMerchant:
    """Make a merchant with its store, key pair, webhook secret and customers.

    Args:
        conn: a write transaction (everything is written in it, or nothing).
        name: what to call it (``None``: `DEFAULT_NAME`).
        sealer: seals its secret key and webhook secret.
        now: the wall-clock time of its making.
    """
    merchant_id = new_id(IdPrefix.MERCHANT)
    suffix = merchant_id.removeprefix(IdPrefix.MERCHANT.value)
    store_id = f"{IdPrefix.STORE.value}{suffix}"
    api_key = f"{IdPrefix.PUBLIC_KEY.value}test_wb_{secrets.token_hex(12)}"
    secret_key = f"{IdPrefix.SECRET_KEY.value}test_wb_{secrets.token_hex(16)}"
    webhook_secret = f"whsec_test_wb_{secrets.token_hex(12)}"
    shown = name or DEFAULT_NAME
    conn.execute(
        sa.insert(tables.merchants).values(
            id=merchant_id, name=shown, clock_offset_us=0, latency_ms=0, created_at=now
        )
    )
    conn.execute(
        sa.insert(tables.stores).values(
            id=store_id,
            merchant_id=merchant_id,
            name=f"{shown} store",
            webhook_url=None,
            webhook_secret=seal_webhook_secret(sealer, store_id, webhook_secret),
        )
    )
    conn.execute(
        sa.insert(tables.api_keys).values(
            api_key=api_key,
            secret_key=seal_secret_key(sealer, api_key, secret_key),
            merchant_id=merchant_id,
            store_id=store_id,
            revoked=False,
        )
    )
    customers = customers_for(merchant_id)
    # A new merchant has none yet: its customers and cards in two statements, not the
    # look-up per row a reset's reseeding makes.
    conn.execute(
        sa.insert(tables.customers),
        [
            {"id": c.id, "merchant_id": merchant_id, "name": c.name, "email": c.email}
            for c in customers
        ],
    )
    conn.execute(
        sa.insert(tables.saved_cards),
        [
            {
                "merchant_id": merchant_id,
                "customer_id": c.id,
                "token": token,
                "is_default": index == 0,
            }
            for c in customers
            for index, token in enumerate(c.cards)
        ],
    )
    return NewMerchant(
        merchant_id,
        shown,
        store_id,
        api_key,
        now,
        tuple(c.id for c in customers),
        secret_key,
        webhook_secret,
    )


def merchant_exists(conn: sa.Connection, merchant_id: str) -> bool:
    """Whether the merchant exists."""
    m = tables.merchants
    return conn.execute(sa.select(m.c.id).where(m.c.id == merchant_id)).first() is not None


def _last_used() -> sa.Subquery:
    """Per merchant, the latest wall-clock time something was recorded for it."""
    i, e = tables.idempotency_records, tables.events
    times = sa.union_all(
        sa.select(i.c.merchant_id, sa.func.max(i.c.created_at).label("at")).group_by(
            i.c.merchant_id
        ),
        sa.select(e.c.merchant_id, sa.func.max(e.c.created_at).label("at")).group_by(
            e.c.merchant_id
        ),
    ).subquery()
    return (
        sa.select(times.c.merchant_id, sa.func.max(times.c.at).label("last_used"))
        .group_by(times.c.merchant_id)
        .subquery()
    )


def list_merchants(conn: sa.Connection) -> list[dict[str, Any]]:
    """Every merchant, oldest first: id, name, built-in or not, made, last used."""
    m = tables.merchants
    used = _last_used()
    rows = conn.execute(
        sa.select(m.c.id, m.c.name, m.c.created_at, used.c.last_used)
        .outerjoin(used, used.c.merchant_id == m.c.id)
        .order_by(m.c.created_at.is_(None).desc(), m.c.created_at, m.c.id)
    ).all()
    return [
        {
            "merchantId": row.id,
            "name": row.name,
            "builtIn": row.id in BUILT_IN_MERCHANTS,
            "created": None if row.created_at is None else iso(row.created_at),
            "lastUsed": None if row.last_used is None else iso(_aware(row.last_used)),
        }
        for row in rows
    ]


def _aware(moment: Any) -> datetime:
    """A time read through an aggregate (which skips the column's type) made aware UTC."""
    from datetime import UTC

    if isinstance(moment, str):
        moment = datetime.fromisoformat(moment)
    value: datetime = moment
    return value if value.tzinfo else value.replace(tzinfo=UTC)


def delete_merchant(
    conn: sa.Connection, merchant_id: str, schema: Sequence[sa.Table]
) -> dict[str, int] | None:
    """Delete the merchant and every row of it; rows deleted per table, ``None`` if unknown.

    Args:
        conn: a write transaction.
        merchant_id: whom.
        schema: every table of the sandbox (`workbench.sandbox.schema.TABLES`).

    Raises:
        BuiltInMerchant: it is a built-in merchant.
    """
    if merchant_id in BUILT_IN_MERCHANTS:
        raise BuiltInMerchant(merchant_id)
    m = tables.merchants
    # Its row locked first (PostgreSQL): a write of another transaction that names the
    # merchant waits for this one instead of slipping in between two of its deletes.
    locked = sa.select(m.c.id).where(m.c.id == merchant_id).with_for_update()
    if conn.execute(locked).first() is None:
        return None
    expiry.forget_lifetime(conn, merchant_id)
    deleted: dict[str, int] = {}
    for name, delete in _deletes(tuple(schema)):
        count = conn.execute(delete, {"merchant_id": merchant_id}).rowcount
        if count:
            deleted[name] = count
    return deleted


@functools.cache
def _deletes(schema: tuple[sa.Table, ...]) -> tuple[tuple[str, sa.Delete], ...]:
    """Every delete of `delete_merchant`, dependents first, the merchant's row last."""
    ordered = sort_tables(sorted(schema, key=lambda t: t.name))
    merchant: sa.BindParameter[str] = sa.bindparam("merchant_id")
    deletes: list[tuple[str, sa.Delete]] = []
    for table in reversed(ordered):
        if table is tables.merchants:
            deletes.append((table.name, sa.delete(table).where(table.c.id == merchant)))
        elif table is tables.leases:
            # A merchant's reconciler lease is named for it (`reconciler.lease_name`).
            name = sa.literal(lease_name("")) + merchant
            deletes.append((table.name, sa.delete(table).where(table.c.name == name)))
        elif "merchant_id" in table.c:
            deletes.append((table.name, sa.delete(table).where(table.c.merchant_id == merchant)))
    return tuple(deletes)
