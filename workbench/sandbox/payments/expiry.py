"""Authorizations expire: a preauthorization not captured within its lifetime is voided.

The spec lets an ``authorized`` payment wait for its capture with no limit shown; a card
network does not (an issuer releases the hold after some days). The sandbox's lifetime
is **7 days of business time** from the moment of authorization (``completedAt``) by
default, and each merchant may change it with ``POST /sandbox/authorization-lifetime``
(the value applies to every authorization of the merchant, those already made included).

When the lifetime has passed, whichever comes first voids the payment, once, under the
payment's row lock: the reconciler's pass at that business time
(`AuthorizationExpiryWork`), or a capture or void of the payment. The payment becomes
``voided`` with a ``payment.voided`` event whose ``reason`` names the expiry; a capture
then answers **409 SVC-PAY-4090** naming it, and a void answers the voided payment (a
void is idempotent on a voided payment).

The lifetime is a row of storage's ``meta`` table (``authorization_lifetime:<merchant>``,
seconds), so every worker of a shared database applies it and no schema change is
needed; a merchant reset deletes it.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import TYPE_CHECKING

import sqlalchemy as sa

from workbench.sandbox.clock import iso
from workbench.sandbox.payments.events import emit
from workbench.sandbox.payments.tables import payments
from workbench.sandbox.storage import AnyRow, meta
from workbench.sandbox.transitions import require
from workbench.spec import PAYMENT

if TYPE_CHECKING:
    from workbench.sandbox.storage import Database

__all__ = [
    "DEFAULT_LIFETIME",
    "MAX_LIFETIME_SECONDS",
    "AuthorizationExpiryWork",
    "expire_if_due",
    "expired_reason",
    "forget_lifetime",
    "lifetime",
    "set_lifetime",
]

#: How long an authorization may wait for its capture unless the merchant changed it.
DEFAULT_LIFETIME = timedelta(days=7)
#: The longest lifetime the control route accepts (a year).
MAX_LIFETIME_SECONDS = 366 * 86_400
_P = payments
_PREFIX = "authorization_lifetime:"
#: The start of every expiry's void reason, to tell it from a merchant's own reason.
_REASON_START = "authorization expired"


def _key(merchant_id: str) -> str:
    return f"{_PREFIX}{merchant_id}"


def lifetime(conn: sa.Connection, merchant_id: str) -> timedelta:
    """The merchant's authorization lifetime (`DEFAULT_LIFETIME` unless changed)."""
    value = conn.execute(
        sa.select(meta.c.value).where(meta.c.key == _key(merchant_id))
    ).scalar_one_or_none()
    return DEFAULT_LIFETIME if value is None else timedelta(seconds=int(value))


def set_lifetime(conn: sa.Connection, merchant_id: str, seconds: int | None) -> timedelta:
    """Set the merchant's lifetime (``None``: the default again); returns the one in force."""
    forget_lifetime(conn, merchant_id)
    if seconds is not None:
        conn.execute(sa.insert(meta).values(key=_key(merchant_id), value=str(seconds)))
    return lifetime(conn, merchant_id)


def forget_lifetime(conn: sa.Connection, merchant_id: str) -> None:
    """Back to the default (a merchant reset calls this)."""
    conn.execute(sa.delete(meta).where(meta.c.key == _key(merchant_id)))


def _span(span: timedelta) -> str:
    seconds = int(span.total_seconds())
    for unit, size in (("day", 86_400), ("hour", 3_600), ("minute", 60)):
        if seconds % size == 0 and seconds >= size:
            count = seconds // size
            return f"{count} {unit}{'' if count == 1 else 's'}"
    return f"{seconds} second{'' if seconds == 1 else 's'}"


def _expires_at(row: AnyRow, span: timedelta) -> datetime:
    authorized_at: datetime = row.completed_at or row.created_at
    return authorized_at + span


def expired_reason(row: AnyRow) -> str | None:
    """The void reason of a payment voided by expiry (``None`` for any other payment)."""
    reason = row.void_reason
    if row.status == "voided" and reason and reason.startswith(_REASON_START):
        return str(reason)
    return None


def expire_if_due(conn: sa.Connection, row: AnyRow, now: datetime) -> AnyRow | None:
    """Void ``row`` (locked by the caller) if it is an authorization past its lifetime.

    Returns the voided row, or ``None`` when nothing changed.
    """
    if row.status != "authorized":
        return None
    span = lifetime(conn, row.merchant_id)
    expires = _expires_at(row, span)
    if now < expires:
        return None
    step = require(PAYMENT, row.status, "expire")
    reason = f"{_REASON_START} at {iso(expires)}: not captured within {_span(span)}"
    conn.execute(
        sa.update(_P)
        .where(_P.c.id == row.id, _P.c.status == "authorized")
        .values(status=step.target, void_reason=reason)
    )
    voided = conn.execute(sa.select(_P).where(_P.c.id == row.id)).one()
    emit(conn, voided, "payment.voided", now, reason=reason)
    return voided


class AuthorizationExpiryWork:
    """Reconciler work: void every authorization whose lifetime has passed.

    Args:
        db: the sandbox database.
    """

    name = "authorization_expiry"

    def __init__(self, db: Database) -> None:
        self.db = db

    def pending_merchants(self, conn: sa.Connection) -> set[str]:
        """Merchants with an authorization."""
        return set(
            conn.execute(
                sa.select(_P.c.merchant_id).where(_P.c.status == "authorized").distinct()
            ).scalars()
        )

    def next_due(self, conn: sa.Connection, merchant_id: str) -> datetime | None:
        """The oldest authorization's moment plus the merchant's lifetime."""
        oldest = conn.execute(
            sa.select(sa.func.min(sa.func.coalesce(_P.c.completed_at, _P.c.created_at))).where(
                _P.c.merchant_id == merchant_id, _P.c.status == "authorized"
            )
        ).scalar_one_or_none()
        if oldest is None:
            return None
        moment: datetime = oldest
        return moment + lifetime(conn, merchant_id)

    def run(self, merchant_id: str, now: datetime, deadline: float) -> int:
        """Void every authorization of the merchant past its lifetime at ``now``."""
        done = 0
        with self.db.write() as conn:
            cutoff = now - lifetime(conn, merchant_id)
            rows = conn.execute(
                sa.select(_P)
                .where(
                    _P.c.merchant_id == merchant_id,
                    _P.c.status == "authorized",
                    sa.func.coalesce(_P.c.completed_at, _P.c.created_at) <= cutoff,
                )
                .with_for_update()
            ).all()
            for row in rows:
                if expire_if_due(conn, row, now) is not None:
                    done += 1
        return done
