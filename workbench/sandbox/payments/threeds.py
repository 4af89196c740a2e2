"""3-D Secure on the payment's side: the callback that finishes a challenged charge, the timeout.

The buyer answers the challenge at the sandbox's ACS (`acs`), which signs the outcome
as a ``pares``; the merchant posts it to ``POST /v1/payments/{id}/3ds-callback``
(`threeds_callback`), which verifies it and moves the payment on through
`workbench.spec.PAYMENT`'s table. A challenge nobody finishes fails after the timeout
(`ThreeDSExpiryWork`, run by the reconciler).
"""

from __future__ import annotations

import secrets
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa

from workbench.sandbox.clock import business_now, iso
from workbench.sandbox.context import Caller
from workbench.sandbox.errors import ServiceError
from workbench.sandbox.payments import acs
from workbench.sandbox.payments.models import ThreeDSCallbackRequest
from workbench.sandbox.payments.service import FAILED_3DS, emit, load, save_card, settled_money
from workbench.sandbox.payments.tables import payments
from workbench.sandbox.replies import Reply, error_reply
from workbench.sandbox.storage import row_like
from workbench.sandbox.transitions import require
from workbench.spec import PAYMENT

if TYPE_CHECKING:
    from workbench.sandbox.storage import Database

__all__ = ["ThreeDSExpiryWork", "threeds_callback"]


def threeds_callback(
    conn: sa.Connection,
    acs_secret: str,
    caller: Caller,
    payment_id: str,
    req: ThreeDSCallbackRequest,
) -> Reply:
    """POST /v1/payments/{id}/3ds-callback: verify the signed pares, finish the charge.

    ``acs_secret`` is the key the simulated ACS signed the pares with.
    """
    row = load(conn, caller.merchant_id, payment_id)
    claims = acs.read_pares(acs_secret, req.pares)
    if claims is None:
        raise ServiceError("SVC-PAY-4001", "pares: not a genuine ACS assertion")
    if (
        claims.get("paymentId") != payment_id
        or claims.get("correlationId") != req.correlationId
        or row.correlation_id != req.correlationId
    ):
        raise ServiceError("SVC-PAY-4001", "pares/correlationId: do not belong to this payment")
    if row.threeds_body is not None:
        return Reply(int(row.threeds_status), bytes(row.threeds_body))
    # A repeat was answered above with the first result; here only a pending challenge goes on.
    require(PAYMENT, row.status, "3ds_callback", repeats=False)
    now = business_now(conn, caller.merchant_id)
    values: dict[str, Any]
    if claims.get("result") == "Y":
        status = "captured" if row.capture else "authorized"
        commission, net = settled_money(status, row.amount, row.installment_count)
        values = {
            "status": status,
            "commission": commission,
            "net_amount": net,
            "auth_code": f"{secrets.randbelow(10**6):06d}",
            "completed_at": now,
        }
        reply = Reply.json(
            200,
            {
                "id": payment_id,
                "status": status,
                "amount": row.amount,
                "currency": row.currency,
                "commission": commission,
                "netAmount": net,
                "authCode": values["auth_code"],
                "completedAt": iso(now),
            },
        )
        event = f"payment.{status}"
    else:
        values = {"status": "failed", "decline_code": "SVC-PAY-3003"}
        reply = error_reply("SVC-PAY-3003", FAILED_3DS, caller.request_id)
        event = "payment.failed"
    values.update(threeds_status=reply.status, threeds_body=reply.body)
    conn.execute(sa.update(payments).where(payments.c.id == payment_id).values(**values))
    merged = row_like(payments, {**row._asdict(), **values})
    if merged.status == "captured":
        save_card(conn, merged)
    emit(conn, merged, event, now)
    return reply


class ThreeDSExpiryWork:
    """Reconciler work: a challenge left unfinished past the timeout fails.

    Args:
        db: the sandbox database.
        timeout_seconds: how long a challenge may wait for the buyer.
    """

    name = "threeds_expiry"

    def __init__(self, db: Database, timeout_seconds: int) -> None:
        self.db = db
        self.timeout = timedelta(seconds=timeout_seconds)

    def pending_merchants(self, conn: sa.Connection) -> set[str]:
        """Merchants with a pending challenge."""
        return set(
            conn.execute(
                sa.select(payments.c.merchant_id)
                .where(payments.c.status == "pending_3ds")
                .distinct()
            ).scalars()
        )

    def next_due(self, conn: sa.Connection, merchant_id: str) -> datetime | None:
        """Creation time of the oldest pending challenge plus the timeout."""
        oldest = conn.execute(
            sa.select(sa.func.min(payments.c.created_at)).where(
                payments.c.merchant_id == merchant_id, payments.c.status == "pending_3ds"
            )
        ).scalar_one_or_none()
        return None if oldest is None else oldest + self.timeout

    def run(self, merchant_id: str, now: datetime, deadline: float) -> int:
        """Fail every challenge older than the timeout."""
        with self.db.write() as conn:
            rows = conn.execute(
                sa.select(payments).where(
                    payments.c.merchant_id == merchant_id,
                    payments.c.status == "pending_3ds",
                    payments.c.created_at <= now - self.timeout,
                )
            ).all()
            for row in rows:
                conn.execute(
                    sa.update(payments)
                    .where(payments.c.id == row.id, payments.c.status == "pending_3ds")
                    .values(status="failed", decline_code="SVC-PAY-3003")
                )
                emit(
                    conn,
                    row_like(payments, {**row._asdict(), "status": "failed"}),
                    "payment.failed",
                    now,
                    reason="3-D Secure challenge timed out",
                )
        return len(rows)
