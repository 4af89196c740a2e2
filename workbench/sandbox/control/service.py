"""The sandbox-only controls behind ``/sandbox/*``, acting on one merchant's data."""

from __future__ import annotations

import functools
import json
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa
from sqlalchemy.sql.ddl import sort_tables

from workbench.sandbox import tables
from workbench.sandbox.cards import TEST_CARDS
from workbench.sandbox.clock import business_now, iso
from workbench.sandbox.fixtures import reseed_customers
from workbench.sandbox.merchant_secrets import plain_webhook_secret
from workbench.sandbox.payments import expiry
from workbench.sandbox.sealing import Sealer

if TYPE_CHECKING:
    from workbench.sandbox.storage import Database

__all__ = [
    "KEEP_ON_RESET",
    "advance_target",
    "consume_fail_next",
    "fixtures_view",
    "reset_merchant",
    "set_fail_next",
    "set_latency",
    "set_rate_limit",
    "set_webhook",
    "target_of",
]

#: Tables a reset leaves alone (the merchant's identity and keys).
KEEP_ON_RESET = frozenset({"merchants", "stores", "api_keys", "meta", "leases"})


def fixtures_view(conn: sa.Connection, merchant_id: str, sealer: Sealer) -> dict[str, Any]:
    """Merchant, stores (their webhook secrets opened by ``sealer``), customers with their
    saved cards, and the test card tokens."""
    m = conn.execute(sa.select(tables.merchants).where(tables.merchants.c.id == merchant_id)).one()
    stores = conn.execute(
        sa.select(tables.stores).where(tables.stores.c.merchant_id == merchant_id)
    ).all()
    customers = []
    c, sc = tables.customers, tables.saved_cards
    for cust in conn.execute(sa.select(c).where(c.c.merchant_id == merchant_id).order_by(c.c.id)):
        saved = conn.execute(sa.select(sc).where(sc.c.customer_id == cust.id).order_by(sc.c.id))
        customers.append(
            {
                "id": cust.id,
                "name": cust.name,
                "email": cust.email,
                "savedCards": [{"token": s.token, "default": s.is_default} for s in saved],
            }
        )
    return {
        "merchant": {"id": m.id, "name": m.name},
        "merchantId": m.id,
        "storeId": stores[0].id,
        "stores": [
            {
                "id": s.id,
                "name": s.name,
                "webhookUrl": s.webhook_url,
                "webhookSecret": plain_webhook_secret(sealer, s.id, s.webhook_secret),
            }
            for s in stores
        ],
        "customers": customers,
        "testCards": [
            {
                "token": t.token,
                "behaviour": t.behaviour,
                "brand": t.brand,
                "cardType": t.card_type,
                "number": t.number,
                "description": t.description,
            }
            for t in TEST_CARDS
        ],
        "businessTime": iso(business_now(conn, merchant_id)),
    }


def reset_merchant(
    conn: sa.Connection, merchant_id: str, schema: Sequence[sa.Table]
) -> dict[str, int]:
    """Delete the merchant's objects (every table with a ``merchant_id`` column but the
    identity tables), re-create its built-in customers, and reset its clock and switches.

    Args:
        conn: a write transaction.
        merchant_id: whose objects.
        schema: every table of the sandbox (the composition root's
            `workbench.sandbox.schema.TABLES`), emptied dependents first, in the order
            ``MetaData.sorted_tables`` gives them reversed (the answer lists them so).
    """
    deleted: dict[str, int] = {}
    for name, delete in _emptying(tuple(schema)):
        deleted[name] = conn.execute(delete, {"merchant_id": merchant_id}).rowcount
    conn.execute(
        sa.update(tables.merchants)
        .where(tables.merchants.c.id == merchant_id)
        .values(clock_offset_us=0, fail_next=None, latency_ms=0)
    )
    expiry.forget_lifetime(conn, merchant_id)
    reseed_customers(conn, merchant_id)
    return deleted


@functools.cache
def _emptying(schema: tuple[sa.Table, ...]) -> tuple[tuple[str, sa.Delete], ...]:
    """The deletes of `reset_merchant`, by table, dependents first: made once per schema
    (each statement built and keyed anew cost a reset about half its time)."""
    ordered = sort_tables(sorted(schema, key=lambda t: t.name))
    merchant: sa.BindParameter[str] = sa.bindparam("merchant_id")
    return tuple(
        (table.name, sa.delete(table).where(table.c.merchant_id == merchant))
        for table in reversed(ordered)
        if table.name not in KEEP_ON_RESET and "merchant_id" in table.c
    )


def consume_fail_next(db: Database, merchant_id: str, mode: str) -> str | None:
    """Take the merchant's pending fail-next switch, once; ``None`` if another took it.

    Whichever request (on whichever worker) takes it first answers for it
    (`workbench.sandbox.edge.switches`). Blocking: run it in a thread.
    """
    m = tables.merchants
    with db.write() as conn:
        done = conn.execute(
            sa.update(m).where(m.c.id == merchant_id, m.c.fail_next == mode).values(fail_next=None)
        )
    return mode if done.rowcount == 1 else None


def set_fail_next(conn: sa.Connection, merchant_id: str, mode: str) -> None:
    """Make the merchant's next gated request fail (``429``, ``500`` or ``timeout:<s>``)."""
    m = tables.merchants
    conn.execute(sa.update(m).where(m.c.id == merchant_id).values(fail_next=mode))


def set_latency(conn: sa.Connection, merchant_id: str, milliseconds: int) -> None:
    """Add simulated latency to every gated request of the merchant (0: none)."""
    m = tables.merchants
    conn.execute(sa.update(m).where(m.c.id == merchant_id).values(latency_ms=milliseconds))


def set_rate_limit(
    conn: sa.Connection, merchant_id: str, per_second: float | None, burst: int
) -> None:
    """Give the merchant its own rate limit, or (``per_second`` ``None``) the default again.

    Kept in the database, so every worker of a shared sandbox applies it.
    """
    limits = tables.rate_limits
    conn.execute(sa.delete(limits).where(limits.c.merchant_id == merchant_id))
    if per_second is not None:
        conn.execute(
            sa.insert(limits).values(merchant_id=merchant_id, per_second=per_second, burst=burst)
        )


def set_webhook(conn: sa.Connection, store_id: str, url: str | None) -> None:
    """Send the store's events from now on to ``url`` (``None``: to no webhook)."""
    stores = tables.stores
    conn.execute(stores.update().where(stores.c.id == store_id).values(webhook_url=url))


def advance_target(conn: sa.Connection, merchant_id: str, seconds: int) -> bytes:
    """Where a clock advance of ``seconds`` asked now ends: the merchant's business time
    plus ``seconds``, to the microsecond, as the bytes its idempotency claim keeps."""
    target = business_now(conn, merchant_id) + timedelta(seconds=seconds)
    return json.dumps({"target": target.isoformat()}).encode()


def target_of(plan: bytes) -> datetime:
    """The target time `advance_target` stored."""
    return datetime.fromisoformat(json.loads(plan)["target"])
