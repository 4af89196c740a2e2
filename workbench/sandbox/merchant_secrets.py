"""A merchant's secret key and webhook secret, sealed in their columns (`Sealer.seal_text`).

``api_keys.secret_key`` is sealed bound to its API key, ``stores.webhook_secret`` to its
store id: a sealed value copied to another row does not open. `seal_plain_secrets`
seals what a database written before secrets were sealed holds in clear; the sandbox
runs it at every start, in the transaction that writes the built-in fixtures.

A database whose secrets were sealed under another key (its key file lost or replaced)
keeps them shut: the built-in merchants' are written again at start, those of merchants
made on demand stay unusable (their keys are refused) until the merchant is deleted.
"""

from __future__ import annotations

import sqlalchemy as sa

from workbench.sandbox import tables
from workbench.sandbox.sealing import Sealer, is_sealed_text

__all__ = [
    "open_secret_key",
    "open_webhook_secret",
    "plain_webhook_secret",
    "seal_plain_secrets",
    "seal_secret_key",
    "seal_webhook_secret",
]


def _key_context(api_key: str) -> str:
    return f"api_keys.secret_key\n{api_key}"


def _store_context(store_id: str) -> str:
    return f"stores.webhook_secret\n{store_id}"


def seal_secret_key(sealer: Sealer, api_key: str, secret: str) -> str:
    """``secret`` as ``api_keys.secret_key`` keeps it for ``api_key``."""
    return sealer.seal_text(secret, _key_context(api_key))


def open_secret_key(sealer: Sealer, api_key: str, stored: str) -> str | None:
    """The secret key stored for ``api_key``; ``None`` if it does not open. One written
    in clear (by hand, or before secrets were sealed, until the next start seals it)
    is taken as it stands."""
    opened = sealer.open_text(stored, _key_context(api_key))
    if opened is None and not is_sealed_text(stored):
        return stored
    return opened


def seal_webhook_secret(sealer: Sealer, store_id: str, secret: str) -> str:
    """``secret`` as ``stores.webhook_secret`` keeps it for ``store_id``."""
    return sealer.seal_text(secret, _store_context(store_id))


def open_webhook_secret(sealer: Sealer, store_id: str, stored: str) -> str | None:
    """The webhook secret stored for ``store_id``; ``None`` if it does not open."""
    return sealer.open_text(stored, _store_context(store_id))


def plain_webhook_secret(sealer: Sealer | None, store_id: str, stored: str) -> str:
    """The webhook secret to sign a delivery with: opened, or as stored when it was
    never sealed; the empty string when it does not open (the receiver refuses it)."""
    if not is_sealed_text(stored):
        return stored
    if sealer is None:
        return ""
    return open_webhook_secret(sealer, store_id, stored) or ""


def seal_plain_secrets(conn: sa.Connection, sealer: Sealer) -> int:
    """Seal every secret key and webhook secret still stored in clear; how many.

    Args:
        conn: a write transaction.
        sealer: the sandbox's.
    """
    keys, stores = tables.api_keys, tables.stores
    done = 0
    plain_keys = conn.execute(
        sa.select(keys.c.api_key, keys.c.secret_key).where(keys.c.secret_key.not_like("wbs1:%"))
    ).all()
    for api_key, secret in plain_keys:
        if is_sealed_text(secret):
            continue
        conn.execute(
            sa.update(keys)
            .where(keys.c.api_key == api_key)
            .values(secret_key=seal_secret_key(sealer, api_key, secret))
        )
        done += 1
    plain_stores = conn.execute(
        sa.select(stores.c.id, stores.c.webhook_secret).where(
            stores.c.webhook_secret.not_like("wbs1:%")
        )
    ).all()
    for store_id, secret in plain_stores:
        if is_sealed_text(secret):
            continue
        conn.execute(
            sa.update(stores)
            .where(stores.c.id == store_id)
            .values(webhook_secret=seal_webhook_secret(sealer, store_id, secret))
        )
        done += 1
    return done
