"""What a finished renewal charge does to its subscription, and the subscription's events.

A charge's outcome is applied once, under the subscription's row lock, by whichever
comes first: the reconciler's finish step (`renewals.RenewalWork.finish_claims`) or a
caller's action on the subscription (`finish_pending`, which cancel, pause and every
other action run before their own change). So a cancel that waited for a charge to
commit sees, answers and records the cycle that charge paid for, and no event about
the charge can follow the cancel's.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import sqlalchemy as sa

from workbench.sandbox import events, tables
from workbench.sandbox.storage import AnyRow
from workbench.sandbox.subscriptions import views
from workbench.sandbox.subscriptions.schedule import after
from workbench.sandbox.subscriptions.tables import subscription_charges, subscriptions
from workbench.sandbox.transitions import require
from workbench.spec import SUBSCRIPTION
from workbench.spec.events import event_type

__all__ = [
    "CHARGEABLE",
    "RETRY_OFFSETS",
    "Settlement",
    "emit",
    "emit_to",
    "finish",
    "finish_many",
    "finish_pending",
    "settle",
    "store_webhooks",
]

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


def emit_to(
    conn: sa.Connection,
    row: dict[str, Any],
    type: str,
    now: datetime,
    extra: Mapping[str, Any],
    webhook: str | None,
) -> str:
    """`emit` with the store's webhook URL read by the caller already (``None``: the
    store has none), so a batch reads it once per store, not once per event."""
    return events.emit(
        conn,
        merchant_id=row["merchant_id"],
        store_id=row["store_id"],
        data=event_type(type).data(**views.event_fields(row), **extra),
        now=now,
        target_url=webhook,
        look_up_webhook=False,
    )


def store_webhooks(conn: sa.Connection, store_ids: Iterable[str]) -> dict[str, str | None]:
    """Each store's webhook URL (``None``: it has none), for `emit_to`."""
    stores = tables.stores
    found = conn.execute(
        sa.select(stores.c.id, stores.c.webhook_url).where(stores.c.id.in_(set(store_ids)))
    ).all()
    return {str(store_id): url for store_id, url in found}


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
    finish_many(conn, [(sub, claim)], now, store_webhooks(conn, [sub.store_id]))


@dataclass(frozen=True, slots=True)
class Settlement:
    """What a charged claim does to its subscription: the columns it sets (``claim_id``
    cleared among them) and the events it records, in order (type, extra fields)."""

    values: dict[str, Any]
    events: tuple[tuple[str, dict[str, Any]], ...]


def settle(sub: Row, claim: Row, now: datetime) -> Settlement:
    """The outcome of ``claim`` (``charged``) on ``sub`` as it stands; nothing is written."""
    if claim.payment_status == "captured":
        return _succeeded(sub, claim, now)
    return _failed(sub, claim, now)


def finish_many(
    conn: sa.Connection,
    items: Sequence[tuple[Row, Row]],
    now: datetime,
    webhooks: Mapping[str, str | None],
) -> None:
    """`finish` for many (subscription, claim) pairs at once, in a few statements.

    Each subscription must be locked by the caller and appear once. The subscriptions'
    new columns are written by one UPDATE per shape of change (executemany), then the
    events are recorded in the pairs' order (each subscription's in its own order), and
    the claims become ``done`` in one UPDATE. ``webhooks``: each store's webhook URL
    (`store_webhooks`).
    """
    if not items:
        return
    shapes: dict[tuple[str, ...], list[dict[str, Any]]] = {}
    recorded: list[tuple[dict[str, Any], tuple[tuple[str, dict[str, Any]], ...]]] = []
    fields = items[0][0]._fields  # the same columns for all: `_asdict` per row costs more
    for sub, claim in items:
        settlement = settle(sub, claim, now)
        values = settlement.values
        params = {f"v_{key}": value for key, value in values.items()}
        shapes.setdefault(tuple(values), []).append({"b_id": sub.id, **params})
        row = dict(zip(fields, sub, strict=True))
        row.update(values)
        recorded.append((row, settlement.events))
    for keys, rows in shapes.items():
        conn.execute(_update_by_id(keys), rows)
    for row, events_ in recorded:
        for type_, extra in events_:
            emit_to(conn, row, type_, now, extra, webhooks.get(row["store_id"]))
    done = [claim.id for _, claim in items]
    conn.execute(sa.update(_C).where(_C.c.id.in_(done)).values(state="done"))


@functools.cache
def _update_by_id(keys: tuple[str, ...]) -> sa.Update:
    """``UPDATE subscriptions SET <key> = :v_<key> ... WHERE id = :b_id``, for an
    executemany; one per shape of change, built once."""
    return (
        sa.update(_S)
        .where(_S.c.id == sa.bindparam("b_id"))
        .values({key: sa.bindparam(f"v_{key}") for key in keys})
    )


def _succeeded(sub: Row, claim: Row, now: datetime) -> Settlement:
    unit, count = sub.interval_unit, sub.interval_count
    if claim.kind == "renewal":
        anchor, periods = sub.anchor_at, int(sub.periods) + 1
    elif claim.kind == "trial_end":
        anchor, periods = claim.due_at, 1
    else:
        anchor, periods = now.replace(microsecond=0), 1
    values: dict[str, Any] = {
        "claim_id": None,
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
    renewed = {
        "payment_id": claim.payment_id,
        "charge_kind": claim.kind,
        "generate_invoice": bool(sub.generate_invoices),
    }
    return Settlement(values, (("subscription.renewed", renewed),))


def _failed(sub: Row, claim: Row, now: datetime) -> Settlement:
    extra = {"payment_id": claim.payment_id, "charge_kind": claim.kind}
    failed = ("subscription.renewal_failed", extra)
    if sub.status not in CHARGEABLE:
        return Settlement({"claim_id": None}, (failed,))
    since = sub.past_due_since or now.replace(microsecond=0)
    retries = [since + offset for offset in RETRY_OFFSETS if since + offset > now]
    if sub.past_due_since is not None and not retries:
        action = "retries_exhausted" if sub.status == "past_due" else "charge_failed"
        expired = require(SUBSCRIPTION, sub.status, action, to="expired").target
        values = {"claim_id": None, "status": expired, "next_charge_at": None, "ended_at": now}
        return Settlement(
            values, (failed, ("subscription.expired", {"reason": "retries_exhausted"}))
        )
    values = {
        "claim_id": None,
        "status": require(SUBSCRIPTION, sub.status, _FAILED[sub.status], to="past_due").target,
        "past_due_since": since,
        "next_charge_at": retries[0],
        "trial_notice_at": None,
    }
    if sub.status == "past_due":
        return Settlement(values, (failed,))
    return Settlement(values, (failed, ("subscription.past_due", {"retry_schedule": retries})))
