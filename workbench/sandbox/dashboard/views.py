"""What the dashboard's pages read: one merchant's objects, their timelines and links.

Every function takes a connection and the merchant's id and reads nothing of another
merchant: an object of another merchant is ``None``, as a missing one is (the page
answers 404 for both).

**Timelines.** The sandbox keeps no table of state transitions: an object's row holds
its current state and a few times (made, completed, ended). The timeline is therefore
derived, and each page says so: the object's creation, then every event about it (each
names the state it left the object in, or implies it: ``refund.settled``), then its
completion time when no event marked it. Events are what the merchant's webhook
receives, so the timeline is the one the merchant could rebuild itself.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import sqlalchemy as sa

from workbench.sandbox import tables
from workbench.sandbox.checkout.messages import N_
from workbench.sandbox.clock import iso
from workbench.sandbox.payments.tables import payments
from workbench.sandbox.refunds.tables import refunds
from workbench.sandbox.sessions.tables import sessions
from workbench.sandbox.subscriptions.tables import subscription_charges, subscriptions

__all__ = [
    "KINDS",
    "ObjectPage",
    "Step",
    "event_page",
    "find_object",
    "list_events",
    "list_objects",
    "recent_events",
]

_E = tables.events
_D = tables.event_deliveries
#: Rows a list shows at most.
LIMIT = 100
#: Events read at most to build one object's timeline.
_TIMELINE_SCAN = 5_000


@dataclass(frozen=True, slots=True)
class Step:
    """One entry of a timeline.

    Attributes:
        at: when (ISO 8601, ``Z``).
        state: the state the object was in after it (``""``: unchanged or not said).
        cause: what did it: ``created``, an event type, ``completed``.
        event_id: the event behind it, if any.
    """

    at: str
    state: str
    cause: str
    event_id: str | None = None


@dataclass(slots=True)
class ObjectPage:
    """An object as its page shows it.

    Attributes:
        kind: ``payments``, ``sessions``, ``refunds`` or ``subscriptions``.
        id: its id.
        state: its state now.
        fields: what its row says, as ``(label, value)`` in order (no secret, no card number).
        timeline: its derived timeline, oldest first.
        events: the events about it, oldest first (id, type, time, delivery state).
        related: links to related objects: ``(label, kind, id)``.
        amount: its amount in kuruş, if it has one.
    """

    kind: str
    id: str
    state: str
    fields: list[tuple[str, str]]
    timeline: list[Step] = field(default_factory=list)
    events: list[dict[str, Any]] = field(default_factory=list)
    related: list[tuple[str, str, str]] = field(default_factory=list)
    amount: int | None = None


def _like(text: str) -> str:
    escaped = text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return escaped + "%"


def _search(columns: Iterable[sa.ColumnElement[Any]], q: str) -> sa.ColumnElement[bool]:
    """``q`` as a whole id or transactionId, or the start of one."""
    return sa.or_(*(c == q for c in columns), *(c.like(_like(q), escape="\\") for c in columns))


def list_objects(conn: sa.Connection, kind: str, merchant_id: str, q: str = "") -> list[Any]:
    """The merchant's newest objects of ``kind`` (`LIMIT`), those matching ``q`` only."""
    q = q.strip()[:64]
    if kind == "payments":
        query = sa.select(
            payments.c.id,
            payments.c.transaction_id,
            payments.c.status,
            payments.c.amount,
            payments.c.created_at,
        ).where(payments.c.merchant_id == merchant_id)
        if q:
            query = query.where(_search((payments.c.id, payments.c.transaction_id), q))
        query = query.order_by(payments.c.created_at.desc(), payments.c.id.desc())
    elif kind == "sessions":
        query = sa.select(
            sessions.c.id,
            sessions.c.transaction_id,
            sessions.c.status,
            sessions.c.amount,
            sessions.c.created_at,
        ).where(sessions.c.merchant_id == merchant_id)
        if q:
            query = query.where(_search((sessions.c.id, sessions.c.transaction_id), q))
        query = query.order_by(sessions.c.created_at.desc(), sessions.c.id.desc())
    elif kind == "refunds":
        query = (
            sa.select(
                refunds.c.id,
                payments.c.transaction_id,
                refunds.c.status,
                refunds.c.amount,
                refunds.c.created_at,
            )
            .join(payments, payments.c.id == refunds.c.payment_id)
            .where(refunds.c.merchant_id == merchant_id)
        )
        if q:
            query = query.where(
                _search((refunds.c.id, refunds.c.payment_id, payments.c.transaction_id), q)
            )
        query = query.order_by(refunds.c.created_at.desc(), refunds.c.id.desc())
    elif kind == "subscriptions":
        query = sa.select(
            subscriptions.c.id,
            sa.literal("").label("transaction_id"),
            subscriptions.c.status,
            subscriptions.c.amount_minor.label("amount"),
            subscriptions.c.created_at,
        ).where(subscriptions.c.merchant_id == merchant_id)
        if q:
            charged = sa.select(subscription_charges.c.subscription_id).where(
                subscription_charges.c.merchant_id == merchant_id,
                _search(
                    (subscription_charges.c.transaction_id, subscription_charges.c.payment_id), q
                ),
            )
            query = query.where(
                sa.or_(_search((subscriptions.c.id,), q), subscriptions.c.id.in_(charged))
            )
        query = query.order_by(subscriptions.c.seq.desc())
    else:
        raise ValueError(f"no list of {kind!r}")
    return list(conn.execute(query.limit(LIMIT)).all())


#: The object kinds with a list and pages, in the nav's order.
KINDS = ("payments", "sessions", "refunds", "subscriptions")


def _events_about(
    conn: sa.Connection, merchant_id: str, object_id: str, since: datetime | None
) -> list[dict[str, Any]]:
    """The merchant's events whose data names ``object_id``, oldest first."""
    query = sa.select(_E.c.id, _E.c.type, _E.c.payload, _E.c.created_at, _E.c.delivery_state).where(
        _E.c.merchant_id == merchant_id
    )
    if since is not None:
        query = query.where(_E.c.created_at >= since)
    found = []
    for row in conn.execute(query.order_by(_E.c.seq).limit(_TIMELINE_SCAN)):
        payload = json.loads(row.payload)
        data = payload.get("data") or {}
        if object_id in {str(v) for v in data.values() if isinstance(v, str)}:
            found.append(
                {
                    "id": row.id,
                    "type": row.type,
                    "createdAt": iso(row.created_at),
                    "state": row.delivery_state,
                    "data": data,
                }
            )
    return found


#: What an event type says of the state of the object it is about, when its data has
#: no ``status`` of that object (a refund's events carry the payment's amount, not its own).
_IMPLIED = {
    "refund.pending": "pending",
    "refund.settled": "succeeded",
    "payment.refunded": "succeeded",
    "session.completed": "completed",
    "session.expired": "expired",
}


def _timeline(
    kind: str,
    created: datetime,
    completed: datetime | None,
    events: list[dict[str, Any]],
    own_status_key: str | None,
) -> list[Step]:
    steps = [Step(iso(created) or "", "", N_("created"))]
    for event in events:
        data = event["data"]
        state = ""
        if own_status_key and isinstance(data.get("status"), str):
            state = str(data["status"])
        elif kind in ("refunds", "sessions"):
            state = _IMPLIED.get(str(event["type"]), "")
        steps.append(Step(str(event["createdAt"]), state, str(event["type"]), str(event["id"])))
    if completed is not None and not any(s.at == iso(completed) for s in steps[1:]):
        steps.append(Step(iso(completed) or "", "", N_("completed")))
    return sorted(steps, key=lambda s: s.at)


def find_object(
    conn: sa.Connection, kind: str, merchant_id: str, object_id: str
) -> ObjectPage | None:
    """One object of the merchant, with its timeline, events and links (``None``: not its)."""
    if kind == "payments":
        return _payment(conn, merchant_id, object_id)
    if kind == "sessions":
        return _session(conn, merchant_id, object_id)
    if kind == "refunds":
        return _refund(conn, merchant_id, object_id)
    if kind == "subscriptions":
        return _subscription(conn, merchant_id, object_id)
    return None


def _payment(conn: sa.Connection, merchant_id: str, object_id: str) -> ObjectPage | None:
    p = payments.c
    row = conn.execute(
        sa.select(payments).where(p.id == object_id, p.merchant_id == merchant_id)
    ).first()
    if row is None:
        return None
    events = _events_about(conn, merchant_id, object_id, row.created_at)
    page = ObjectPage(
        "payments",
        row.id,
        row.status,
        [
            ("transactionId", row.transaction_id),
            ("amount", str(row.amount)),
            ("currency", row.currency),
            ("refundedAmount", str(row.refunded_amount)),
            ("card", f"{row.card_brand} {row.card_mask}"),
            ("installments", str(row.installment_count)),
            ("threeDSecure", "yes" if row.three_d_secure else "no"),
            ("declineCode", row.decline_code or "-"),
            ("createdAt", iso(row.created_at) or ""),
            ("completedAt", iso(row.completed_at) or "-"),
        ],
        _timeline("payments", row.created_at, row.completed_at, events, "status"),
        events,
        amount=int(row.amount),
    )
    for s in conn.execute(
        sa.select(sessions.c.id).where(
            sessions.c.merchant_id == merchant_id,
            sa.or_(
                sessions.c.payment_id == object_id, sessions.c.transaction_id == row.transaction_id
            ),
        )
    ):
        page.related.append(("session", "sessions", s.id))
    for r in conn.execute(
        sa.select(refunds.c.id)
        .where(refunds.c.payment_id == object_id, refunds.c.merchant_id == merchant_id)
        .order_by(refunds.c.created_at)
    ):
        page.related.append(("refund", "refunds", r.id))
    for c in conn.execute(
        sa.select(subscription_charges.c.subscription_id).where(
            subscription_charges.c.payment_id == object_id,
            subscription_charges.c.merchant_id == merchant_id,
        )
    ):
        page.related.append(("subscription", "subscriptions", c.subscription_id))
    return page


def _session(conn: sa.Connection, merchant_id: str, object_id: str) -> ObjectPage | None:
    s = sessions.c
    row = conn.execute(
        sa.select(sessions).where(s.id == object_id, s.merchant_id == merchant_id)
    ).first()
    if row is None:
        return None
    events = _events_about(conn, merchant_id, object_id, row.created_at)
    page = ObjectPage(
        "sessions",
        row.id,
        row.status,
        [
            ("transactionId", row.transaction_id or "-"),
            ("mode", row.mode),
            ("amount", str(row.amount)),
            ("currency", row.currency),
            ("description", row.description or "-"),
            ("createdAt", iso(row.created_at) or ""),
            ("expiresAt", iso(row.expires_at) or ""),
            ("completedAt", iso(row.completed_at) or "-"),
        ],
        _timeline("sessions", row.created_at, row.completed_at, events, None),
        events,
        amount=int(row.amount),
    )
    payment_ids = [row.payment_id] if row.payment_id else []
    if not payment_ids and row.transaction_id:
        payment_ids = list(
            conn.execute(
                sa.select(payments.c.id).where(
                    payments.c.merchant_id == merchant_id,
                    payments.c.transaction_id == row.transaction_id,
                )
            ).scalars()
        )
    page.related.extend(("payment", "payments", str(p)) for p in payment_ids)
    if row.subscription_id:
        page.related.append(("subscription", "subscriptions", row.subscription_id))
    return page


def _refund(conn: sa.Connection, merchant_id: str, object_id: str) -> ObjectPage | None:
    r = refunds.c
    row = conn.execute(
        sa.select(refunds).where(r.id == object_id, r.merchant_id == merchant_id)
    ).first()
    if row is None:
        return None
    events = _events_about(conn, merchant_id, object_id, row.created_at)
    page = ObjectPage(
        "refunds",
        row.id,
        row.status,
        [
            ("paymentId", row.payment_id),
            ("amount", str(row.amount)),
            ("reason", row.reason or "-"),
            ("createdAt", iso(row.created_at) or ""),
            ("settleAt", iso(row.settle_at) or "-"),
            ("completedAt", iso(row.completed_at) or "-"),
        ],
        _timeline("refunds", row.created_at, row.completed_at, events, None),
        events,
        [("payment", "payments", row.payment_id)],
        amount=int(row.amount),
    )
    return page


def _subscription(conn: sa.Connection, merchant_id: str, object_id: str) -> ObjectPage | None:
    s = subscriptions.c
    row = conn.execute(
        sa.select(subscriptions).where(s.id == object_id, s.merchant_id == merchant_id)
    ).first()
    if row is None:
        return None
    events = _events_about(conn, merchant_id, object_id, row.created_at)
    page = ObjectPage(
        "subscriptions",
        row.id,
        row.status,
        [
            ("customerId", row.customer_id),
            ("amount", str(row.amount_minor)),
            ("currency", row.currency),
            ("interval", f"{row.interval_count} {row.interval_unit}"),
            ("cycle", str(row.cycle_number)),
            ("card", f"{row.card_brand} •••• {row.card_last4}"),
            ("nextChargeAt", iso(row.next_charge_at) or "-"),
            ("cancelAtPeriodEnd", "yes" if row.cancel_at_period_end else "no"),
            ("createdAt", iso(row.created_at) or ""),
            ("endedAt", iso(row.ended_at) or "-"),
        ],
        _timeline("subscriptions", row.created_at, row.ended_at, events, "status"),
        events,
        amount=int(row.amount_minor),
    )
    for c in conn.execute(
        sa.select(subscription_charges.c.payment_id, subscription_charges.c.cycle_number)
        .where(
            subscription_charges.c.subscription_id == object_id,
            subscription_charges.c.merchant_id == merchant_id,
            subscription_charges.c.payment_id.is_not(None),
        )
        .order_by(subscription_charges.c.cycle_number, subscription_charges.c.id)
    ):
        page.related.append((f"payment (cycle {c.cycle_number})", "payments", str(c.payment_id)))
    for sess in conn.execute(
        sa.select(sessions.c.id).where(
            sessions.c.subscription_id == object_id, sessions.c.merchant_id == merchant_id
        )
    ):
        page.related.append(("session", "sessions", sess.id))
    return page


# --- events ---------------------------------------------------------------------------


def recent_events(conn: sa.Connection, merchant_id: str, limit: int = LIMIT) -> list[Any]:
    """The merchant's newest events."""
    return list(
        conn.execute(
            sa.select(_E.c.id, _E.c.type, _E.c.created_at, _E.c.delivery_state)
            .where(_E.c.merchant_id == merchant_id)
            .order_by(_E.c.seq.desc())
            .limit(limit)
        ).all()
    )


def list_events(conn: sa.Connection, merchant_id: str, q: str = "", type_: str = "") -> list[Any]:
    """The merchant's newest events, by id (or its start) and type."""
    query = sa.select(_E.c.id, _E.c.type, _E.c.created_at, _E.c.delivery_state).where(
        _E.c.merchant_id == merchant_id
    )
    if q.strip():
        query = query.where(_search((_E.c.id,), q.strip()[:64]))
    if type_.strip():
        query = query.where(_E.c.type == type_.strip()[:60])
    return list(conn.execute(query.order_by(_E.c.seq.desc()).limit(LIMIT)).all())


#: Where the event's data names an object: the data key, and that object's kind.
_OBJECT_LINKS = (
    ("paymentId", "payments"),
    ("refundId", "refunds"),
    ("sessionId", "sessions"),
    ("subscriptionId", "subscriptions"),
)


def event_page(conn: sa.Connection, merchant_id: str, event_id: str) -> dict[str, Any] | None:
    """An event of the merchant: payload, delivery, attempts, linked objects (``None``: not its)."""
    row = conn.execute(
        sa.select(_E).where(_E.c.id == event_id, _E.c.merchant_id == merchant_id)
    ).first()
    if row is None:
        return None
    payload = json.loads(row.payload)
    data = payload.get("data") or {}
    attempts = conn.execute(
        sa.select(_D)
        .where(_D.c.event_id == event_id, _D.c.merchant_id == merchant_id)
        .order_by(_D.c.attempt, _D.c.id)
    ).all()
    return {
        "id": row.id,
        "type": row.type,
        "createdAt": iso(row.created_at),
        "payload": json.dumps(payload, indent=2, ensure_ascii=False),
        "state": row.delivery_state,
        "url": row.target_url,
        "attempts_made": int(row.attempts),
        "nextAttemptAt": iso(row.next_attempt_at) if row.delivery_state == "pending" else None,
        "deliveredAt": iso(row.delivered_at),
        "lastError": row.last_error,
        "objects": [(key, kind, str(data[key])) for key, kind in _OBJECT_LINKS if data.get(key)],
        "attempts": [
            {
                "attempt": a.attempt,
                "at": iso(a.attempted_at),
                "url": a.target_url or row.target_url,
                "status": a.status_code,
                "error": a.error,
                "latency_ms": a.latency_ms,
                "excerpt": a.response_excerpt,
            }
            for a in attempts
        ],
    }
