"""Checkout sessions: creation (``transactionId`` fenced), completion and expiry.

A session is ``active`` for `workbench.spec.limits.SESSION_LIFETIME_SECONDS` of the
merchant's business time, then the reconciler marks it ``expired``; the hosted
checkout marks it ``completed`` through `complete_session`.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa

from workbench.sandbox import events, tables
from workbench.sandbox.clock import business_now, iso
from workbench.sandbox.context import Caller
from workbench.sandbox.errors import ServiceError
from workbench.sandbox.idempotency import fingerprint
from workbench.sandbox.ids import new_uuid
from workbench.sandbox.replies import Reply, dumps
from workbench.sandbox.sessions.models import SessionRequest
from workbench.sandbox.sessions.tables import sessions, transaction_ids
from workbench.sandbox.storage import AnyRow, insert_lock_row
from workbench.sandbox.transitions import require
from workbench.spec import SESSION, limits
from workbench.spec.events import SessionCompletedData, SessionExpiredData

if TYPE_CHECKING:
    from workbench.sandbox.storage import Database

__all__ = [
    "SessionExpiryWork",
    "complete_session",
    "create_session",
    "get_session",
    "session_body",
    "take_transaction_id",
]

_S = sessions
Row = AnyRow
# The payments a transactionId may already belong to. Named, not imported: the payments
# package imports this one (a charge reads its session's terms), and this read needs
# three of its columns.
_PAID = sa.table("payments", sa.column("id"), sa.column("merchant_id"), sa.column("transaction_id"))


_TAKE = sa.insert(transaction_ids)


def take_transaction_id(conn: sa.Connection, merchant_id: str, transaction_id: str) -> None:
    """Record that a new payment or checkout session takes ``transaction_id``.

    Called by whichever of the two finds neither under it (a charge under a session's
    transactionId finds the session and takes nothing). Its row's primary key is the one
    lock a charge and a session creation contend for: two transactions that each read
    nothing under the transactionId (PostgreSQL, two connections) both insert here, one
    meets the unique index and runs again (`Database.transact`), and then finds the
    other's payment or session and answers as it would have, one after the other.

    Raises:
        sqlalchemy.exc.IntegrityError: another transaction took it first (on PostgreSQL
            from the next statement or the commit).
    """
    insert_lock_row(conn, _TAKE, {"merchant_id": merchant_id, "transaction_id": transaction_id})


def session_body(row: Row | dict[str, Any]) -> dict[str, Any]:
    """The checkout session as the creation call returns it."""
    r = row if isinstance(row, dict) else row._asdict()
    return {
        "sessionId": r["id"],
        "checkoutUrl": r["checkout_url"],
        "expiresAt": iso(r["expires_at"]),
        "merchantId": r["merchant_id"],
        "amount": r["amount"],
        "currency": r["currency"],
        "status": r["status"],
    }


def _check_rules(conn: sa.Connection, caller: Caller, req: SessionRequest) -> None:
    if req.mode == "card_update_only":
        if req.amount is not None:
            raise ServiceError("SVC-VAL-4001", "amount: must be omitted for mode card_update_only")
        if req.customerId is None:
            raise ServiceError("SVC-VAL-4001", "customerId: required for mode card_update_only")
    elif req.amount is None:
        raise ServiceError("SVC-VAL-4001", f"amount: required for mode {req.mode}")
    if req.splits is not None:
        if req.mode != "payment":
            raise ServiceError("SVC-VAL-4001", "splits: allowed only in mode payment")
        total = sum(split.amountMinor for split in req.splits)
        if req.amount is not None and total > req.amount:
            raise ServiceError("SVC-VAL-4001", f"splits: amounts sum to {total}, more than amount")
    if req.customerId is not None:
        c = tables.customers
        found = conn.execute(
            sa.select(c.c.id).where(c.c.id == req.customerId, c.c.merchant_id == caller.merchant_id)
        ).first()
        if found is None:
            raise ServiceError("SVC-VAL-4001", "customerId: no such customer for this merchant")


def _check_unpaid(conn: sa.Connection, caller: Caller, transaction_id: str) -> None:
    """A session's transactionId must not belong to a payment already.

    The hosted page would otherwise find that payment, of whatever amount, and complete
    the session with it.

    Raises:
        ServiceError: SVC-GW-2001 naming ``transactionId`` and the payment.
    """
    paid = conn.execute(
        sa.select(_PAID.c.id).where(
            _PAID.c.merchant_id == caller.merchant_id, _PAID.c.transaction_id == transaction_id
        )
    ).first()
    if paid is not None:
        raise ServiceError(
            "SVC-GW-2001",
            f"transactionId: already belongs to payment {paid.id}; a checkout session "
            "needs a transactionId no payment has used",
        )


def create_session(
    conn: sa.Connection,
    caller: Caller,
    req: SessionRequest,
    checkout_base: str,
    *,
    subscription_id: str | None = None,
) -> Reply:
    """POST /v1/payments/sessions: 201 with the session; a repeated transactionId replays it.

    Raises:
        ServiceError: SVC-GW-2001 when the transactionId names another session's payload
            or belongs to a payment already.
    """
    _check_rules(conn, caller, req)
    digest = fingerprint(req)
    existing = conn.execute(
        sa.select(_S).where(
            _S.c.merchant_id == caller.merchant_id, _S.c.transaction_id == req.transactionId
        )
    ).first()
    if existing is not None:
        if existing.fingerprint != digest:
            raise ServiceError(
                "SVC-GW-2001",
                "transactionId was already used for a session with a different payload",
            )
        return Reply(200, bytes(existing.response_body))
    _check_unpaid(conn, caller, req.transactionId)
    now = business_now(conn, caller.merchant_id)
    session_id = new_uuid()
    row: dict[str, Any] = {
        "id": session_id,
        "merchant_id": caller.merchant_id,
        "store_id": caller.store_id,
        "transaction_id": req.transactionId,
        "fingerprint": digest,
        "mode": req.mode,
        "status": "active",
        "amount": req.amount or 0,
        "currency": req.currency,
        "description": req.description,
        "return_url": req.returnUrl,
        "callback_url": req.callbackUrl,
        "installment_enabled": req.installmentEnabled,
        "customer_id": req.customerId,
        "subscription_id": subscription_id,
        "splits": [s.model_dump() for s in req.splits] if req.splits else None,
        "checkout_url": f"{checkout_base.rstrip('/')}/checkout/{session_id}",
        "created_at": now,
        "expires_at": now + timedelta(seconds=limits.SESSION_LIFETIME_SECONDS),
    }
    require(SESSION, None, "create", to=row["status"])
    body = dumps(session_body(row))
    conn.execute(sa.insert(_S).values(**row, response_body=body))
    take_transaction_id(conn, caller.merchant_id, req.transactionId)
    return Reply(201, body)


def get_session(conn: sa.Connection, session_id: str) -> Row | None:
    """A session by id, whatever its merchant (the hosted page's session id is its bearer)."""
    return conn.execute(sa.select(_S).where(_S.c.id == session_id)).first()


def complete_session(conn: sa.Connection, session_id: str, *, payment_id: str | None = None) -> Row:
    """Mark an active session ``completed`` (the hosted checkout calls this).

    Raises:
        ServiceError: SVC-GW-4004 for no such session, SVC-SES-4090 if it is not active.
    """
    row = conn.execute(sa.select(_S).where(_S.c.id == session_id).with_for_update()).first()
    if row is None:
        raise ServiceError("SVC-GW-4004", "no such checkout session")
    now = business_now(conn, row.merchant_id)
    step = require(SESSION, row.status, "complete")
    if row.expires_at <= now:  # expired by the clock, before the reconciler marked it
        raise ServiceError("SVC-SES-4090", "checkout session is expired")
    conn.execute(
        sa.update(_S)
        .where(_S.c.id == session_id)
        .values(status=step.target, completed_at=now, payment_id=payment_id)
    )
    events.emit(
        conn,
        merchant_id=row.merchant_id,
        store_id=row.store_id,
        now=now,
        target_url=row.callback_url,
        data=SessionCompletedData(
            session_id=session_id,
            transaction_id=row.transaction_id,
            mode=row.mode,
            payment_id=payment_id,
        ),
    )
    return conn.execute(sa.select(_S).where(_S.c.id == session_id)).one()


class SessionExpiryWork:
    """Reconciler work: active sessions past ``expiresAt`` become ``expired``.

    Args:
        db: the sandbox database.
    """

    name = "sessions"

    def __init__(self, db: Database) -> None:
        self.db = db

    def pending_merchants(self, conn: sa.Connection) -> set[str]:
        """Merchants with an active session."""
        return set(
            conn.execute(
                sa.select(_S.c.merchant_id).where(_S.c.status == "active").distinct()
            ).scalars()
        )

    def next_due(self, conn: sa.Connection, merchant_id: str) -> datetime | None:
        """The earliest expiry of an active session."""
        return conn.execute(
            sa.select(sa.func.min(_S.c.expires_at)).where(
                _S.c.merchant_id == merchant_id, _S.c.status == "active"
            )
        ).scalar_one_or_none()

    def run(self, merchant_id: str, now: datetime, deadline: float) -> int:
        """Expire every session due by ``now``."""
        with self.db.write() as conn:
            rows = conn.execute(
                sa.select(_S).where(
                    _S.c.merchant_id == merchant_id, _S.c.status == "active", _S.c.expires_at <= now
                )
            ).all()
            for row in rows:
                conn.execute(sa.update(_S).where(_S.c.id == row.id).values(status="expired"))
                events.emit(
                    conn,
                    merchant_id=merchant_id,
                    store_id=row.store_id,
                    now=now,
                    target_url=row.callback_url,
                    data=SessionExpiredData(session_id=row.id, transaction_id=row.transaction_id),
                )
        return len(rows)
