"""The sandbox's built-in data: two merchants, their stores and keys, customers with saved cards.

| what | demo merchant | second merchant |
|---|---|---|
| merchant | ``mrc_demo0001`` | ``mrc_other0001`` |
| store | ``sto_demo0001`` | ``sto_other0001`` |
| key pair | the configured pair (``workbench.config``) | `OTHER_API_KEY` / `OTHER_SECRET_KEY` |
| revoked key | `REVOKED_API_KEY` / `REVOKED_SECRET_KEY` (SVC-GW-1003) | |
| customers | ``cus_demo_ayse``, ``cus_demo_mehmet``, ``cus_demo_zeynep`` | ``cus_other_can`` |

These keys are public on purpose: they open nothing but a local sandbox. A merchant
made on demand (`workbench.sandbox.control.merchants`) gets the demo merchant's
customers and saved cards under ids of its own (`customers_for`).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import sqlalchemy as sa

from workbench.sandbox import tables
from workbench.sandbox.cards import seed_test_tokens
from workbench.sandbox.merchant_secrets import (
    open_secret_key,
    open_webhook_secret,
    seal_secret_key,
    seal_webhook_secret,
)
from workbench.sandbox.sealing import Sealer

__all__ = [
    "BUILT_IN_MERCHANTS",
    "DEMO_MERCHANT_ID",
    "DEMO_STORE_ID",
    "OTHER_API_KEY",
    "OTHER_MERCHANT_ID",
    "OTHER_SECRET_KEY",
    "OTHER_STORE_ID",
    "REVOKED_API_KEY",
    "REVOKED_SECRET_KEY",
    "CustomerFixture",
    "customers_for",
    "customers_of",
    "ensure_fixtures",
    "reseed_customers",
]

DEMO_MERCHANT_ID = "mrc_demo0001"
DEMO_STORE_ID = "sto_demo0001"
OTHER_MERCHANT_ID = "mrc_other0001"
OTHER_STORE_ID = "sto_other0001"
OTHER_API_KEY = "pk_test_wb_other_0001"
OTHER_SECRET_KEY = "sk_test_wb_other_secret_0001"
REVOKED_API_KEY = "pk_test_wb_revoked_0001"
REVOKED_SECRET_KEY = "sk_test_wb_revoked_secret_0001"
#: The merchants every sandbox has, which cannot be deleted.
BUILT_IN_MERCHANTS = frozenset({DEMO_MERCHANT_ID, OTHER_MERCHANT_ID})


@dataclass(frozen=True, slots=True)
class CustomerFixture:
    """A built-in customer and its saved cards (the first is the default)."""

    id: str
    merchant_id: str
    name: str
    email: str
    cards: tuple[str, ...]


CUSTOMERS: tuple[CustomerFixture, ...] = (
    CustomerFixture(
        "cus_demo_ayse",
        DEMO_MERCHANT_ID,
        "Ayşe Yılmaz",
        "ayse@example.com",
        ("tok_test_success", "tok_test_3ds_challenge"),
    ),
    CustomerFixture(
        "cus_demo_mehmet",
        DEMO_MERCHANT_ID,
        "Mehmet Demir",
        "mehmet@example.com",
        ("tok_test_renewal_fails", "tok_test_success"),
    ),
    CustomerFixture(
        "cus_demo_zeynep",
        DEMO_MERCHANT_ID,
        "Zeynep Kaya",
        "zeynep@example.com",
        ("tok_test_refund_async",),
    ),
    CustomerFixture(
        "cus_other_can", OTHER_MERCHANT_ID, "Can Öztürk", "can@example.com", ("tok_test_success",)
    ),
)


def customers_of(merchant_id: str) -> list[CustomerFixture]:
    """The built-in customers of one merchant."""
    return [c for c in CUSTOMERS if c.merchant_id == merchant_id]


def customers_for(merchant_id: str) -> list[CustomerFixture]:
    """The customers a merchant starts with: a built-in merchant's own, else the demo
    merchant's under ids of this merchant (``cus_demo_ayse`` -> ``cus_<suffix>_ayse``,
    the suffix being the merchant id's after ``mrc_``)."""
    if merchant_id in BUILT_IN_MERCHANTS:
        return customers_of(merchant_id)
    suffix = merchant_id.removeprefix("mrc_")
    return [
        CustomerFixture(
            c.id.replace("cus_demo_", f"cus_{suffix}_", 1), merchant_id, c.name, c.email, c.cards
        )
        for c in customers_of(DEMO_MERCHANT_ID)
    ]


def _upsert(conn: sa.Connection, table: sa.Table, key: str, values: dict[str, object]) -> None:
    column = table.c[key]
    if conn.execute(sa.select(column).where(column == values[key])).first() is None:
        conn.execute(sa.insert(table).values(**values))


def _upsert_key(conn: sa.Connection, sealer: Sealer, values: dict[str, object]) -> None:
    """Insert or correct a built-in key; a row that already says so is not written (a
    write would empty every worker's key cache at each start)."""
    table = tables.api_keys
    api_key, secret = str(values["api_key"]), str(values["secret_key"])
    row = conn.execute(sa.select(table).where(table.c.api_key == api_key)).first()
    if row is not None:
        same = all(
            getattr(row, name) == value for name, value in values.items() if name != "secret_key"
        )
        if same and open_secret_key(sealer, api_key, str(row.secret_key)) == secret:
            return
    sealed = {**values, "secret_key": seal_secret_key(sealer, api_key, secret)}
    if row is None:
        conn.execute(sa.insert(table).values(**sealed))
    else:
        conn.execute(sa.update(table).where(table.c.api_key == api_key).values(**sealed))


def _upsert_store(conn: sa.Connection, sealer: Sealer, values: dict[str, object]) -> None:
    """Insert a built-in store, or reseal its webhook secret if it does not open."""
    table = tables.stores
    store_id, secret = str(values["id"]), str(values["webhook_secret"])
    stored = conn.execute(
        sa.select(table.c.webhook_secret).where(table.c.id == store_id)
    ).scalar_one_or_none()
    sealed = seal_webhook_secret(sealer, store_id, secret)
    if stored is None:
        conn.execute(sa.insert(table).values(**{**values, "webhook_secret": sealed}))
    elif open_webhook_secret(sealer, store_id, str(stored)) != secret:
        conn.execute(sa.update(table).where(table.c.id == store_id).values(webhook_secret=sealed))


def reseed_customers(conn: sa.Connection, merchant_id: str) -> None:
    """Insert the merchant's built-in customers and saved cards that are missing."""
    for customer in customers_for(merchant_id):
        _upsert(
            conn,
            tables.customers,
            "id",
            {
                "id": customer.id,
                "merchant_id": merchant_id,
                "name": customer.name,
                "email": customer.email,
            },
        )
        saved = tables.saved_cards
        for index, token in enumerate(customer.cards):
            present = conn.execute(
                sa.select(saved.c.id).where(
                    saved.c.customer_id == customer.id, saved.c.token == token
                )
            ).first()
            if present is None:
                conn.execute(
                    sa.insert(saved).values(
                        merchant_id=merchant_id,
                        customer_id=customer.id,
                        token=token,
                        is_default=index == 0,
                    )
                )


def ensure_fixtures(
    conn: sa.Connection, *, api_key: str, secret_key: str, now: datetime, sealer: Sealer
) -> None:
    """Create whatever built-in data is missing; point the demo key pair at the config's.

    Idempotent: run at every start, on a fresh or a restarted database. The secrets are
    stored sealed by ``sealer``.
    """
    seed_test_tokens(conn, now)
    for merchant_id, name in (
        (DEMO_MERCHANT_ID, "Demo Merchant"),
        (OTHER_MERCHANT_ID, "Other Ltd"),
    ):
        _upsert(
            conn,
            tables.merchants,
            "id",
            {
                "id": merchant_id,
                "name": name,
                "clock_offset_us": 0,
                "latency_ms": 0,
                "created_at": now,
            },
        )
    _upsert_store(
        conn,
        sealer,
        {
            "id": DEMO_STORE_ID,
            "merchant_id": DEMO_MERCHANT_ID,
            "name": "Demo Store",
            "webhook_url": None,
            "webhook_secret": "whsec_test_wb_demo_0001",
        },
    )
    _upsert_store(
        conn,
        sealer,
        {
            "id": OTHER_STORE_ID,
            "merchant_id": OTHER_MERCHANT_ID,
            "name": "Other Store",
            "webhook_url": None,
            "webhook_secret": "whsec_test_wb_other_0001",
        },
    )
    _upsert_key(
        conn,
        sealer,
        {
            "api_key": api_key,
            "secret_key": secret_key,
            "merchant_id": DEMO_MERCHANT_ID,
            "store_id": DEMO_STORE_ID,
            "revoked": False,
        },
    )
    _upsert_key(
        conn,
        sealer,
        {
            "api_key": REVOKED_API_KEY,
            "secret_key": REVOKED_SECRET_KEY,
            "merchant_id": DEMO_MERCHANT_ID,
            "store_id": DEMO_STORE_ID,
            "revoked": True,
        },
    )
    _upsert_key(
        conn,
        sealer,
        {
            "api_key": OTHER_API_KEY,
            "secret_key": OTHER_SECRET_KEY,
            "merchant_id": OTHER_MERCHANT_ID,
            "store_id": OTHER_STORE_ID,
            "revoked": False,
        },
    )
    for merchant_id in (DEMO_MERCHANT_ID, OTHER_MERCHANT_ID):
        reseed_customers(conn, merchant_id)
