"""Refunds: synchronous (200, ``completed``) or in flight (202, ``pending``) until settled.

``refundableAmount`` subtracts in-flight refunds as well as completed ones, and the
payment row is locked while a refund is decided, so concurrent refund calls can
never refund more than was captured. ``refundAmount`` counts completed refunds.
"""

from __future__ import annotations

import secrets
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa

from workbench.sandbox import events
from workbench.sandbox.clock import business_now, iso
from workbench.sandbox.context import Caller
from workbench.sandbox.errors import ServiceError
from workbench.sandbox.ids import new_id
from workbench.sandbox.payments.service import load, refundable
from workbench.sandbox.payments.tables import payments
from workbench.sandbox.refunds.models import RefundRequest
from workbench.sandbox.refunds.tables import refunds
from workbench.sandbox.replies import Reply
from workbench.sandbox.transitions import require
from workbench.spec import PAYMENT, IdPrefix, limits
from workbench.spec.events import PaymentRefundedData, RefundPendingData, RefundSettledData

if TYPE_CHECKING:
    from workbench.sandbox.storage import Database

__all__ = ["RefundSettlementWork", "refund", "refund_reply"]

_R = refunds
_P = payments


def refund_reply(conn: sa.Connection, refund_id: str) -> Reply:
    """The refund call's answer for a refund's *current* state: 202 in flight, 200 settled."""
    r = conn.execute(sa.select(_R).where(_R.c.id == refund_id)).one()
    p = conn.execute(sa.select(_P).where(_P.c.id == r.payment_id)).one()
    body: dict[str, Any] = {
        "paymentId": p.id,
        "status": p.status,
        "refundAmount": p.refunded_amount,
        "refundableAmount": refundable(p),
        "lastRefund": {
            "refundId": r.id,
            "status": r.status,
            "amount": r.amount,
            "bankRefundId": r.bank_refund_id,
            "createdAt": iso(r.created_at),
            "completedAt": iso(r.completed_at),
        },
    }
    if r.status == "pending":
        return Reply.json(202, body, provisional=("refund", r.id))
    return Reply.json(200, body)


def _bank_id() -> str:
    return f"BNK{secrets.token_hex(6).upper()}"


def refund(
    conn: sa.Connection,
    caller: Caller,
    payment_id: str,
    req: RefundRequest,
    *,
    settle_seconds: int,
) -> Reply:
    """POST /v1/payments/{id}/refund.

    ``settle_seconds``: business time an in-flight refund takes to settle.
    """
    row = load(conn, caller.merchant_id, payment_id)
    require(PAYMENT, row.status, "refund")
    left = refundable(row)
    amount = req.amount if req.amount is not None else left
    if left == 0:
        raise ServiceError(
            "SVC-PAY-4002", "amount: nothing is left to refund (refundableAmount is 0)"
        )
    if amount > left:
        raise ServiceError("SVC-PAY-4002", f"amount: {amount} exceeds refundableAmount {left}")
    now = business_now(conn, caller.merchant_id)
    in_flight = row.behaviour == "refund_async"
    refund_id = new_id(IdPrefix.REFUND)
    conn.execute(
        sa.insert(_R).values(
            id=refund_id,
            merchant_id=caller.merchant_id,
            payment_id=payment_id,
            amount=amount,
            reason=(req.reason or None) and req.reason[: limits.REFUND_REASON_MAX],
            status="pending" if in_flight else "completed",
            bank_refund_id=None if in_flight else _bank_id(),
            created_at=now,
            completed_at=None if in_flight else now,
            settle_at=now + timedelta(seconds=settle_seconds) if in_flight else None,
        )
    )
    if in_flight:
        values = {"pending_refund_amount": row.pending_refund_amount + amount}
    else:
        values = {"refunded_amount": row.refunded_amount + amount}
    conn.execute(sa.update(_P).where(_P.c.id == payment_id).values(**values))
    made = RefundPendingData if in_flight else PaymentRefundedData
    data = made(payment_id=payment_id, refund_id=refund_id, amount=amount, currency=row.currency)
    events.emit(
        conn,
        merchant_id=caller.merchant_id,
        store_id=row.store_id,
        data=data,
        now=now,
        target_url=row.callback_url,
    )
    return refund_reply(conn, refund_id)


def settle(conn: sa.Connection, refund_id: str, now: datetime) -> bool:
    """Complete one in-flight refund exactly once; ``False`` if it was already settled."""
    done = conn.execute(
        sa.update(_R)
        .where(_R.c.id == refund_id, _R.c.status == "pending")
        .values(status="completed", completed_at=now, bank_refund_id=_bank_id())
    )
    if done.rowcount != 1:
        return False
    r = conn.execute(sa.select(_R).where(_R.c.id == refund_id)).one()
    p = conn.execute(sa.select(_P).where(_P.c.id == r.payment_id).with_for_update()).one()
    conn.execute(
        sa.update(_P)
        .where(_P.c.id == p.id)
        .values(
            pending_refund_amount=p.pending_refund_amount - r.amount,
            refunded_amount=p.refunded_amount + r.amount,
        )
    )
    data = RefundSettledData(payment_id=p.id, refund_id=r.id, amount=r.amount, currency=p.currency)
    events.emit(
        conn,
        merchant_id=p.merchant_id,
        store_id=p.store_id,
        data=data,
        now=now,
        target_url=p.callback_url,
    )
    return True


class RefundSettlementWork:
    """Reconciler work: settle in-flight refunds whose settlement time has come.

    Args:
        db: the sandbox database.
    """

    name = "refunds"

    def __init__(self, db: Database) -> None:
        self.db = db

    def pending_merchants(self, conn: sa.Connection) -> set[str]:
        """Merchants with a pending refund."""
        return set(
            conn.execute(
                sa.select(_R.c.merchant_id).where(_R.c.status == "pending").distinct()
            ).scalars()
        )

    def next_due(self, conn: sa.Connection, merchant_id: str) -> datetime | None:
        """The earliest settlement time of a pending refund."""
        return conn.execute(
            sa.select(sa.func.min(_R.c.settle_at)).where(
                _R.c.merchant_id == merchant_id, _R.c.status == "pending"
            )
        ).scalar_one_or_none()

    def run(self, merchant_id: str, now: datetime, deadline: float) -> int:
        """Settle every refund due by ``now``."""
        with self.db.write() as conn:
            due = (
                conn.execute(
                    sa.select(_R.c.id)
                    .where(
                        _R.c.merchant_id == merchant_id,
                        _R.c.status == "pending",
                        _R.c.settle_at <= now,
                    )
                    .order_by(_R.c.settle_at)
                )
                .scalars()
                .all()
            )
            return sum(settle(conn, refund_id, now) for refund_id in due)


def settle_all(db: Database, merchant_id: str) -> int:
    """Settle every in-flight refund of the merchant now (the ``/sandbox/settle`` control)."""
    with db.write() as conn:
        now = business_now(conn, merchant_id)
        due = (
            conn.execute(
                sa.select(_R.c.id).where(_R.c.merchant_id == merchant_id, _R.c.status == "pending")
            )
            .scalars()
            .all()
        )
        return sum(settle(conn, refund_id, now) for refund_id in due)
