"""What a finished renewal charge does to its subscription, and the subscription's events.

A charge's outcome is applied once, under the subscription's row lock, by whichever
comes first: the reconciler's finish step (`renewals.RenewalWork.finish_claims`) or a
caller's action on the subscription (`finish_pending`, which cancel, pause and every
other action run before their own change). So a cancel that waited for a charge to
commit sees, answers and records the cycle that charge paid for, and no event about
the charge can follow the cancel's.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import sqlalchemy as sa

from workbench.sandbox import events
from workbench.sandbox.storage import AnyRow
from workbench.sandbox.subscriptions import views
from workbench.sandbox.subscriptions.schedule import after
from workbench.sandbox.subscriptions.tables import subscription_charges, subscriptions
from workbench.sandbox.transitions import require
from workbench.spec import SUBSCRIPTION
from workbench.spec.events import event_type

__all__ = ["CHARGEABLE", "RETRY_OFFSETS", "emit", "finish", "finish_pending"]

_S = subscriptions
_C = subscription_charges
Row = AnyRow
#: When a past_due subscription is retried, counted from its first failed charge.
RETRY_OFFSETS = (timedelta(days=1), timedelta(days=3), timedelta(days=5))
#: The statuses in which a subscription's card may be charged.
CHARGEABLE = ("active", "trialing", "past_due", "charging")
#: The state table's action for a declined charge, by the status it declined in.
_FAILED = {
    "active": "renewal_failed",
    "trialing": "trial_end_failed",
    "past_due": "retry_failed",
    "charging": "charge_failed",
}


def emit(
    conn: sa.Connection, row: Row | dict[str, Any], type: str, now: datetime, **extra: Any
) -> str:
    """Record a ``subscription.*`` event for the subscription's store.

    ``type`` names its definition in `workbench.spec.events`; ``extra`` are that
    definition's own fields by their Python names (``reason``, ``payment_id`` ...).
    """
    r = row if isinstance(row, dict) else row._asdict()
    return events.emit(
        conn,
        merchant_id=r["merchant_id"],
        store_id=r["store_id"],
        data=event_type(type).data(**views.event_fields(r), **extra),
        now=now,
    )


def finish_pending(conn: sa.Connection, sub: Row) -> Row:
    """Apply the outcome of ``sub``'s charge if it was made but not yet applied.

    ``sub`` must be locked by the caller (``SELECT … FOR UPDATE``). A claim still
    ``processing`` is left alone: its charge step locks the same row and, seeing what
    the caller changed, charges or abandons it. Returns the row as it now is.
    """
    if sub.claim_id is None:
        return sub
    claim = conn.execute(
        sa.select(_C).where(_C.c.id == sub.claim_id, _C.c.state == "charged")
    ).first()
    if claim is None:
        return sub
    finish(conn, sub, claim, claim.charged_at)
    return conn.execute(sa.select(_S).where(_S.c.id == sub.id)).one()


def finish(conn: sa.Connection, sub: Row, claim: Row, now: datetime) -> None:
    """Apply a ``charged`` claim's outcome to its locked subscription; the claim is ``done``."""
    if claim.payment_status == "captured":
        _succeeded(conn, sub, claim, now)
    else:
        _failed(conn, sub, claim, now)
    conn.execute(sa.update(_C).where(_C.c.id == claim.id).values(state="done"))


def _apply(conn: sa.Connection, sub: Row, **values: Any) -> Row:
    conn.execute(sa.update(_S).where(_S.c.id == sub.id).values(claim_id=None, **values))
    return conn.execute(sa.select(_S).where(_S.c.id == sub.id)).one()


def _succeeded(conn: sa.Connection, sub: Row, claim: Row, now: datetime) -> None:
    unit, count = sub.interval_unit, sub.interval_count
    if claim.kind == "renewal":
        anchor, periods = sub.anchor_at, int(sub.periods) + 1
    elif claim.kind == "trial_end":
        anchor, periods = claim.due_at, 1
    else:
        anchor, periods = now.replace(microsecond=0), 1
    values: dict[str, Any] = {
        "cycle_number": int(sub.cycle_number) + 1,
        "anchor_at": anchor,
        "periods": periods,
    }
    if sub.status in CHARGEABLE:
        action = {
            "trialing": "trial_end",
            "charging": "charge_succeeded",
            "past_due": "retry_succeeded",
        }.get(sub.status, "renew")
        values.update(
            status=require(SUBSCRIPTION, sub.status, action).target,
            next_charge_at=after(anchor, unit, count, periods),
            past_due_since=None,
            trial_notice_at=None,
        )
    row = _apply(conn, sub, **values)
    emit(
        conn,
        row,
        "subscription.renewed",
        now,
        payment_id=claim.payment_id,
        charge_kind=claim.kind,
        generate_invoice=bool(row.generate_invoices),
    )


def _failed(conn: sa.Connection, sub: Row, claim: Row, now: datetime) -> None:
    extra = {"payment_id": claim.payment_id, "charge_kind": claim.kind}
    if sub.status not in CHARGEABLE:
        row = _apply(conn, sub)
        emit(conn, row, "subscription.renewal_failed", now, **extra)
        return
    since = sub.past_due_since or now.replace(microsecond=0)
    retries = [since + offset for offset in RETRY_OFFSETS if since + offset > now]
    if sub.past_due_since is not None and not retries:
        action = "retries_exhausted" if sub.status == "past_due" else "charge_failed"
        expired = require(SUBSCRIPTION, sub.status, action, to="expired").target
        row = _apply(conn, sub, status=expired, next_charge_at=None, ended_at=now)
        emit(conn, row, "subscription.renewal_failed", now, **extra)
        emit(conn, row, "subscription.expired", now, reason="retries_exhausted")
        return
    row = _apply(
        conn,
        sub,
        status=require(SUBSCRIPTION, sub.status, _FAILED[sub.status], to="past_due").target,
        past_due_since=since,
        next_charge_at=retries[0],
        trial_notice_at=None,
    )
    emit(conn, row, "subscription.renewal_failed", now, **extra)
    if sub.status != "past_due":
        emit(conn, row, "subscription.past_due", now, retry_schedule=retries)
