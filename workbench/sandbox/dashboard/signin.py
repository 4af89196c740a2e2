"""Who may sign in to the dashboard, and as whom.

Three ways, each ending in a `Viewer`:

1. **A merchant's key pair** (`by_secret_key`): its API key and secret key, the secret
   opened from its sealed column (`workbench.sandbox.merchant_secrets`) and compared in
   constant time. A revoked key, an unknown one, a wrong secret: refused alike.
2. **The admin token** (`workbench.sandbox.admin.AdminAccess`), on a sandbox reachable
   beyond loopback, where merchants are the admin's to make: any merchant, picked from
   the list (`merchants_to_pick`, `viewer_for_merchant`).
3. **A one-time link** (`issue_link`, `redeem_link`) that `workbench sandbox` prints on
   a loopback sandbox, as Jupyter prints its token URL: it signs the demo merchant in
   once. The database keeps only the token's SHA-256 (a ``meta`` row), and redeeming
   deletes the row: of two browsers, or two workers, that present it at once, one wins.
"""

from __future__ import annotations

import hashlib
import hmac

import sqlalchemy as sa

from workbench.sandbox import tables
from workbench.sandbox.dashboard.sessions import Viewer, new_token
from workbench.sandbox.keys import look_up
from workbench.sandbox.merchant_secrets import open_secret_key
from workbench.sandbox.sealing import Sealer
from workbench.sandbox.storage import Database

__all__ = [
    "LINK_PREFIX",
    "by_secret_key",
    "issue_link",
    "merchants_to_pick",
    "redeem_link",
    "viewer_for_merchant",
]

#: ``meta`` rows of one-time sign-in links: this prefix and the token's SHA-256 (48 hex).
LINK_PREFIX = "dashboard_link:"


def _link_row(token: str) -> str:
    return LINK_PREFIX + hashlib.sha256(token.encode("utf-8")).hexdigest()[:48]


def by_secret_key(db: Database, sealer: Sealer, api_key: str, secret_key: str) -> Viewer | None:
    """The merchant of a key pair, or ``None`` (unknown, revoked, wrong secret); blocking."""
    if not api_key or not secret_key or len(api_key) > 128 or len(secret_key) > 256:
        return None
    record = look_up(db, api_key)
    if record is None or record.revoked:
        return None
    secret = open_secret_key(sealer, api_key, record.secret_key)
    if secret is None or not hmac.compare_digest(secret.encode(), secret_key.encode()):
        return None
    return Viewer(record.merchant_id, record.store_id, record.api_key)


def viewer_for_merchant(conn: sa.Connection, merchant_id: str, *, admin: bool) -> Viewer | None:
    """A session showing ``merchant_id``, acting with its first key that is not revoked."""
    keys = tables.api_keys
    row = conn.execute(
        sa.select(keys.c.api_key, keys.c.store_id)
        .where(keys.c.merchant_id == merchant_id, keys.c.revoked.is_(False))
        .order_by(keys.c.api_key)
        .limit(1)
    ).first()
    if row is None:
        return None
    return Viewer(merchant_id, str(row.store_id), str(row.api_key), admin=admin)


def merchants_to_pick(conn: sa.Connection) -> list[tuple[str, str]]:
    """Every merchant as ``(id, name)``, for the admin's picker (no secret)."""
    m = tables.merchants
    rows = conn.execute(sa.select(m.c.id, m.c.name).order_by(m.c.created_at, m.c.id)).all()
    return [(str(r.id), str(r.name)) for r in rows]


def issue_link(conn: sa.Connection) -> str:
    """A new one-time sign-in token (its hash kept); the caller prints the link once.

    Args:
        conn: a write transaction.
    """
    token = new_token()
    conn.execute(sa.insert(tables.meta).values(key=_link_row(token), value="demo"))
    return token


def redeem_link(conn: sa.Connection, token: str) -> bool:
    """Use a one-time token: ``True`` once, for the transaction that deletes its row.

    Args:
        conn: a write transaction.
        token: what the link carried.
    """
    if not token or len(token) > 128:
        return False
    meta = tables.meta
    result = conn.execute(sa.delete(meta).where(meta.c.key == _link_row(token)))
    return result.rowcount == 1
