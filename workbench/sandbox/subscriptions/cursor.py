"""Opaque list cursors, bound to the merchant and the filters they were issued for.

A cursor is ``base64url(position) "." base64url(HMAC-SHA256(secret, merchant, filters,
position))`` truncated to 128 bits. The secret is random, kept in the database (so
cursors survive a restart) and never leaves it; a cursor edited, replayed by
another merchant or sent with other filters fails the MAC and is a 400 naming
``cursor``, so it can never reach another merchant's rows.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets

import sqlalchemy as sa

from workbench.sandbox import tables
from workbench.sandbox.errors import ServiceError
from workbench.sandbox.storage import Database

__all__ = ["decode", "encode", "ensure_secret"]

_META_KEY = "subscription_cursor_secret"
_MAC_BYTES = 16


def ensure_secret(db: Database) -> bytes:
    """The cursor secret: read, or created on first use (a lost creation race re-reads)."""

    def read(conn: sa.Connection) -> str | None:
        return conn.execute(
            sa.select(tables.meta.c.value).where(tables.meta.c.key == _META_KEY)
        ).scalar_one_or_none()

    with db.read() as conn:
        value = read(conn)
    if value is None:

        def create(conn: sa.Connection) -> str:
            found = read(conn)
            if found is not None:
                return found
            fresh = secrets.token_hex(32)
            conn.execute(sa.insert(tables.meta).values(key=_META_KEY, value=fresh))
            return fresh

        value = db.transact(create)
    return bytes.fromhex(str(value))


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _mac(secret: bytes, merchant_id: str, scope: str, position: bytes) -> bytes:
    message = b"\x00".join((merchant_id.encode(), scope.encode(), position))
    return hmac.new(secret, message, hashlib.sha256).digest()[:_MAC_BYTES]


def encode(secret: bytes, merchant_id: str, scope: str, position: int) -> str:
    """A cursor continuing after ``position`` for this merchant and filter ``scope``."""
    raw = str(position).encode("ascii")
    return f"{_b64(raw)}.{_b64(_mac(secret, merchant_id, scope, raw))}"


def decode(secret: bytes, merchant_id: str, scope: str, cursor: str) -> int:
    """The position a cursor continues after.

    Raises:
        ServiceError: SVC-VAL-4001 when the cursor was not issued to this merchant for
            these filters (or is not a cursor at all).
    """
    invalid = ServiceError(
        "SVC-VAL-4001",
        "cursor: not a cursor issued for this listing; pass nextCursor back unchanged "
        "with the same filters",
    )
    head, sep, tail = cursor.partition(".")
    if not sep or len(cursor) > 200:
        raise invalid
    try:
        raw, mac = _unb64(head), _unb64(tail)
    except ValueError:
        raise invalid from None
    if not hmac.compare_digest(mac, _mac(secret, merchant_id, scope, raw)):
        raise invalid
    try:
        return int(raw.decode("ascii"))
    except ValueError:
        raise invalid from None
