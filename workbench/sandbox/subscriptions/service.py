"""Subscriptions: creation, the list, reads, and every caller action on the state machine.

Each function runs inside the caller's write (or read) transaction, locks the row it
changes, checks `workbench.spec.SUBSCRIPTION` and records the events it causes. An
action the table does not allow from the current status is SVC-SUB-4090, naming the
status and the actions it does allow. The reconciler's side is `renewals`.
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
import secrets
from dataclasses import asdict, dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa

from workbench.sandbox import cards, tables
from workbench.sandbox.clock import business_now, iso
from workbench.sandbox.context import Caller
from workbench.sandbox.errors import ServiceError
from workbench.sandbox.ids import new_id
from workbench.sandbox.replies import Reply
from workbench.sandbox.sessions import service as sessions
from workbench.sandbox.sessions.models import SessionRequest
from workbench.sandbox.storage import AnyRow
from workbench.sandbox.subscriptions import cursor as cursors
from workbench.sandbox.subscriptions import views
from workbench.sandbox.subscriptions.models import (
    CancelRequest,
    PublicCancelRequest,
    SubscriptionRequest,
)
from workbench.sandbox.subscriptions.outcome import (
    emit,
    emit_to,
    finish_pending,
    store_webhooks,
)
from workbench.sandbox.subscriptions.portal_return import sealed_return
from workbench.sandbox.subscriptions.schedule import after
from workbench.sandbox.subscriptions.tables import subscription_charges, subscriptions
from workbench.sandbox.transitions import require
from workbench.spec import SUBSCRIPTION, IdPrefix, looks_like_card_number

if TYPE_CHECKING:
    from collections.abc import Callable

    from workbench.sandbox.sealing import Sealer

__all__ = [
    "MAX_TRIAL_DAYS",
    "TRIAL_NOTICE",
    "ListFilters",
    "cancel",
    "charge_now",
    "charges",
    "create",
    "create_many",
    "emit",
    "get",
    "hash_digest",
    "list_page",
    "load",
    "parse_instant",
    "pause",
    "portal_caller",
    "public_cancel",
    "public_get",
    "replace_card",
    "resume",
    "retry",
    "update_card_session",
]

_S = subscriptions
_C = subscription_charges
Row = AnyRow
#: How long before a trial ends its ``subscription.trial_will_end`` event is sent.
TRIAL_NOTICE = timedelta(days=3)
#: The latest a trial may end, counted from creation.
MAX_TRIAL_DAYS = 730
_INSTANT_RE = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,6})?Z$")


def hash_digest(public_hash: str) -> str:
    """What the table keeps of a publicHash (the bearer itself is never stored)."""
    return hashlib.sha256(public_hash.encode("utf-8")).hexdigest()


def parse_instant(field: str, text: str) -> datetime:
    """An ISO 8601 UTC timestamp ending in ``Z`` (``2027-01-31T10:00:00Z``).

    Raises:
        ServiceError: SVC-VAL-4001 naming ``field`` for any other shape.
    """
    if not _INSTANT_RE.match(text):
        raise ServiceError(
            "SVC-VAL-4001", f"{field}: must be an ISO 8601 UTC timestamp like 2027-01-31T10:00:00Z"
        )
    try:
        return datetime.fromisoformat(text[:-1]).replace(tzinfo=UTC)
    except ValueError:
        raise ServiceError("SVC-VAL-4001", f"{field}: not a real date and time") from None


def load(conn: sa.Connection, merchant_id: str, subscription_id: str) -> Row:
    """The merchant's subscription, locked for update, with a made charge's outcome applied.

    Every action takes this lock (so does the reconciler's charge and finish, see
    `renewals`). A renewal charged but not yet finished (its claim ``charged``) is
    finished here first (`outcome.finish_pending`), so the action, its answer and its
    event see the cycle that was paid for, and nothing about that charge follows them.

    Raises:
        ServiceError: SVC-GW-4004 when it does not exist *for this merchant*.
    """
    return finish_pending(conn, _find(conn, merchant_id, subscription_id, lock=True))


def _find(conn: sa.Connection, merchant_id: str, subscription_id: str, *, lock: bool) -> Row:
    query = sa.select(_S).where(_S.c.id == subscription_id, _S.c.merchant_id == merchant_id)
    row = conn.execute(query.with_for_update() if lock else query).first()
    if row is None:
        raise ServiceError("SVC-GW-4004", "no such subscription for this merchant")
    return row


def _by_hash(conn: sa.Connection, public_hash: str, *, lock: bool = False) -> Row:
    query = sa.select(_S).where(_S.c.public_hash_sha256 == hash_digest(public_hash))
    row = conn.execute(query.with_for_update() if lock else query).first()
    if row is None:
        raise ServiceError("SVC-GW-4004", "no such subscription link")
    return finish_pending(conn, row) if lock else row


def _update(conn: sa.Connection, row: Row, **values: Any) -> Row:
    conn.execute(sa.update(_S).where(_S.c.id == row.id).values(**values))
    return conn.execute(sa.select(_S).where(_S.c.id == row.id)).one()


def _card_of(
    conn: sa.Connection, caller_merchant: str, customer_id: str, token: str | None
) -> cards.CardRecord:
    if token is None:
        saved = tables.saved_cards
        token = conn.execute(
            sa.select(saved.c.token)
            .where(saved.c.customer_id == customer_id, saved.c.merchant_id == caller_merchant)
            .order_by(saved.c.is_default.desc(), saved.c.id)
        ).scalar()
        if token is None:
            raise ServiceError(
                "SVC-VAL-4001", "cardToken: the customer has no saved card; send a cardToken"
            )
    if looks_like_card_number(token):
        raise ServiceError(
            "SVC-VAL-4002",
            "cardToken: raw card numbers are never accepted; send a tok_ vault token",
        )
    if not token.startswith("tok_"):
        raise ServiceError("SVC-VAL-4001", "cardToken: must be a vault token starting with tok_")
    card = cards.find_token(conn, caller_merchant, token)
    if card is None:
        raise ServiceError("SVC-VAL-4001", "cardToken: no such token for this merchant")
    return card


def create(conn: sa.Connection, caller: Caller, req: SubscriptionRequest) -> Reply:
    """POST /v1/subscriptions: 201 with the subscription, its publicHash included."""
    ((row, public_hash),) = create_many(conn, caller, req, 1)
    reply = Reply.json(201, views.full(row, public_hash))
    reply.carries_bearer = True  # an idempotency record keeps it sealed
    return reply


def create_many(
    conn: sa.Connection, caller: Caller, req: SubscriptionRequest, count: int
) -> list[tuple[Row, str]]:
    """``count`` subscriptions made by ``req`` at once, as ``count`` calls of `create`
    make them (the route makes one): checked once, written in one INSERT, each with its
    ``subscription.created`` event. Seeds a month-end rehearsal or a benchmark with
    exactly the rows the API writes.

    Returns:
        Each new row, oldest first, with its publicHash (shown once, never stored).

    Raises:
        ServiceError: SVC-VAL-4001 / 4002 for a store, customer, card or trial the
            route would refuse.
    """
    st, cu = tables.stores, tables.customers
    if (
        conn.execute(
            sa.select(st.c.id).where(st.c.id == req.storeId, st.c.merchant_id == caller.merchant_id)
        ).first()
        is None
    ):
        raise ServiceError("SVC-VAL-4001", "storeId: no such store for this merchant")
    if (
        conn.execute(
            sa.select(cu.c.id).where(
                cu.c.id == req.customerId, cu.c.merchant_id == caller.merchant_id
            )
        ).first()
        is None
    ):
        raise ServiceError("SVC-VAL-4001", "customerId: no such customer for this merchant")
    card = _card_of(conn, caller.merchant_id, req.customerId, req.cardToken)
    now = business_now(conn, caller.merchant_id).replace(microsecond=0)
    trial_end = None
    if req.trialEndAt is not None:
        trial_end = parse_instant("trialEndAt", req.trialEndAt)
        if trial_end <= now:
            raise ServiceError("SVC-VAL-4001", f"trialEndAt: must be after now ({iso(now)})")
        if trial_end > now + timedelta(days=MAX_TRIAL_DAYS):
            raise ServiceError("SVC-VAL-4001", f"trialEndAt: at most {MAX_TRIAL_DAYS} days ahead")
    created = "trialing" if trial_end is not None else "active"
    status = require(SUBSCRIPTION, None, "create", to=created).target
    hashes: dict[str, str] = {}
    made: list[dict[str, Any]] = []
    for _ in range(count):
        public_hash = secrets.token_urlsafe(24)
        values: dict[str, Any] = {
            "id": new_id(IdPrefix.SUBSCRIPTION),
            "merchant_id": caller.merchant_id,
            "store_id": req.storeId,
            "customer_id": req.customerId,
            "public_hash_sha256": hash_digest(public_hash),
            "status": status,
            "amount_minor": req.amountMinor,
            "currency": req.currency,
            "interval_count": req.intervalCount,
            "interval_unit": req.intervalUnit,
            "cycle_number": 0,
            "anchor_at": trial_end or now,
            "periods": 0 if trial_end else 1,
            "next_charge_at": trial_end or after(now, req.intervalUnit, req.intervalCount, 1),
            "trial_end_at": trial_end,
            "trial_notice_at": max(now, trial_end - TRIAL_NOTICE) if trial_end else None,
            "attempts": 0,
            "card_token": card.token,
            "card_last4": card.last4,
            "card_brand": card.brand,
            "cancel_at_period_end": False,
            "generate_invoices": req.generateInvoices,
            "description": req.description,
            "created_at": now,
        }
        hashes[values["id"]] = public_hash
        made.append(values)
    if not made:
        return []
    conn.execute(sa.insert(_S), made)
    rows = conn.execute(sa.select(_S).where(_S.c.id.in_(list(hashes))).order_by(_S.c.seq)).all()
    webhook = store_webhooks(conn, [req.storeId]).get(req.storeId)
    for row in rows:
        emit_to(conn, row._asdict(), "subscription.created", now, {}, webhook)
    return [(row, hashes[row.id]) for row in rows]


@dataclass(frozen=True, slots=True)
class ListFilters:
    """The list's filters; ``from_`` inclusive and ``to`` exclusive on ``createdAt``."""

    storeId: str | None = None
    customerId: str | None = None
    status: str | None = None
    from_: str | None = None
    to: str | None = None

    def scope(self) -> str:
        """A canonical string of the filters, which a cursor is bound to."""
        return json.dumps(asdict(self), sort_keys=True, separators=(",", ":"))


#: The list's filter conditions, by the name of the parameter each binds.
_LIST_FILTERS: dict[str, Callable[[], sa.ColumnElement[bool]]] = {
    "f_after": lambda: _S.c.seq > sa.bindparam("f_after"),
    "f_store": lambda: _S.c.store_id == sa.bindparam("f_store"),
    "f_customer": lambda: _S.c.customer_id == sa.bindparam("f_customer"),
    "f_status": lambda: _S.c.status == sa.bindparam("f_status"),
    "f_from": lambda: _S.c.created_at >= sa.bindparam("f_from", type_=_S.c.created_at.type),
    "f_to": lambda: _S.c.created_at < sa.bindparam("f_to", type_=_S.c.created_at.type),
}


@functools.lru_cache(maxsize=64)  # every combination of the six filters
def _list_query(given: frozenset[str]) -> sa.Select[Any]:
    """The page query for the parameters ``given``, built once per combination: building
    a statement costs a page more than its rows do."""
    query = sa.select(*views.LIST_COLUMNS).where(_S.c.merchant_id == sa.bindparam("f_merchant"))
    for name, condition in _LIST_FILTERS.items():
        if name in given:
            query = query.where(condition())
    return query.order_by(_S.c.seq).limit(sa.bindparam("f_limit"))


def list_page(
    conn: sa.Connection,
    merchant_id: str,
    filters: ListFilters,
    limit: int,
    cursor: str | None,
    secret: bytes,
) -> bytes:
    """GET /v1/subscriptions: one page in creation order, keyset-paginated, as the
    response body (`views.list_page_json`).

    ``secret`` is the cursor secret (`cursor.ensure_secret`).
    """
    scope = filters.scope()
    params: dict[str, Any] = {"f_merchant": merchant_id, "f_limit": limit + 1}
    if cursor is not None:
        params["f_after"] = cursors.decode(secret, merchant_id, scope, cursor)
    if filters.storeId is not None:
        params["f_store"] = filters.storeId
    if filters.customerId is not None:
        params["f_customer"] = filters.customerId
    if filters.status is not None:
        params["f_status"] = filters.status
    if filters.from_ is not None:
        params["f_from"] = parse_instant("from", filters.from_)
    if filters.to is not None:
        params["f_to"] = parse_instant("to", filters.to)
    rows = conn.execute(_list_query(frozenset(params)), params).all()
    more = len(rows) > limit
    rows = rows[:limit]
    next_cursor = cursors.encode(secret, merchant_id, scope, int(rows[-1][0])) if more else None
    return views.list_page_json(rows, next_cursor)


def get(conn: sa.Connection, caller: Caller, subscription_id: str) -> dict[str, Any]:
    """GET /v1/subscriptions/{id} (no publicHash)."""
    return views.full(_find(conn, caller.merchant_id, subscription_id, lock=False))


def charges(conn: sa.Connection, caller: Caller, subscription_id: str) -> dict[str, Any]:
    """GET /v1/subscriptions/{id}/charges: every attempt that reached the card, oldest first."""
    _find(conn, caller.merchant_id, subscription_id, lock=False)
    rows = conn.execute(
        sa.select(_C)
        .where(_C.c.subscription_id == subscription_id, _C.c.payment_id.is_not(None))
        .order_by(_C.c.id)
    ).all()
    return {"items": [views.charge_item(r) for r in rows]}


def _cancel(
    conn: sa.Connection, row: Row, action: str, at_period_end: bool, reason: str | None
) -> Row:
    if row.status == "charging":
        # A charge is running: the cancel is refused, not queued, so the answer never
        # claims an outcome the charge has not decided yet.
        raise ServiceError(
            "SVC-SUB-4090",
            "subscription is charging: a charge is running; retry the cancel when the "
            "status leaves charging (the next reconciler pass finishes it)",
            headers={"Retry-After": "1"},
        )
    require(SUBSCRIPTION, row.status, action)
    now = business_now(conn, row.merchant_id)
    if at_period_end and row.status in ("active", "trialing"):
        require(SUBSCRIPTION, row.status, action, to=row.status)  # the status stays
        row = _update(conn, row, cancel_at_period_end=True, cancel_reason=reason)
        emit(conn, row, "subscription.cancel_scheduled", now, reason=reason)
        return row
    ended = require(SUBSCRIPTION, row.status, action, to="cancelled").target
    # An immediate cancel replaces a scheduled one: nothing waits for a period end now,
    # so the answer says ``cancelAtPeriodEnd: false``.
    row = _update(
        conn,
        row,
        status=ended,
        cancel_at_period_end=False,
        next_charge_at=None,
        trial_notice_at=None,
        cancel_reason=reason,
        ended_at=now,
    )
    emit(conn, row, "subscription.cancelled", now, reason=reason)
    return row


def cancel(conn: sa.Connection, caller: Caller, subscription_id: str, req: CancelRequest) -> Reply:
    """POST /v1/subscriptions/{id}/cancel."""
    row = _cancel(
        conn, load(conn, caller.merchant_id, subscription_id), "cancel", req.atPeriodEnd, req.reason
    )
    body = {"id": row.id, "status": row.status, "cancelAtPeriodEnd": row.cancel_at_period_end}
    return Reply.json(200, body)


def pause(conn: sa.Connection, caller: Caller, subscription_id: str) -> Reply:
    """POST /v1/subscriptions/{id}/pause: the reconciler leaves it alone until resumed."""
    row = load(conn, caller.merchant_id, subscription_id)
    paused = require(SUBSCRIPTION, row.status, "pause").target
    now = business_now(conn, row.merchant_id)
    row = _update(conn, row, status=paused, next_charge_at=None, trial_notice_at=None)
    emit(conn, row, "subscription.paused", now)
    return Reply.json(200, {"id": row.id, "status": row.status})


def resume(conn: sa.Connection, caller: Caller, subscription_id: str) -> Reply:
    """POST /v1/subscriptions/{id}/resume: active, charged on the next reconciler tick.

    One set to cancel at period end is not charged: it is active
    until the end of the period already paid for (``nextChargeAt``), where the
    reconciler cancels it, or at the next tick when that end has passed.
    """
    row = load(conn, caller.merchant_id, subscription_id)
    resumed = require(SUBSCRIPTION, row.status, "resume").target
    now = business_now(conn, row.merchant_id)
    due = now
    if row.cancel_at_period_end:
        paid_until = after(row.anchor_at, row.interval_unit, row.interval_count, row.periods)
        due = max(paid_until, now)
    row = _update(conn, row, status=resumed, next_charge_at=due, trial_end_at=None)
    emit(conn, row, "subscription.resumed", now)
    return Reply.json(200, {"id": row.id, "status": row.status})


def retry(conn: sa.Connection, caller: Caller, subscription_id: str) -> Reply:
    """POST /v1/subscriptions/{id}/retry: ``nextChargeAt`` becomes now."""
    row = load(conn, caller.merchant_id, subscription_id)
    require(SUBSCRIPTION, row.status, "retry")
    now = business_now(conn, row.merchant_id)
    row = _update(conn, row, next_charge_at=now)
    body = {"id": row.id, "status": row.status, "nextChargeAt": iso(row.next_charge_at)}
    return Reply.json(200, body)


def charge_now(conn: sa.Connection, caller: Caller, subscription_id: str) -> Reply:
    """POST /v1/subscriptions/{id}/charge-now: ``charging`` until the next tick charges it."""
    row = load(conn, caller.merchant_id, subscription_id)
    charging = require(SUBSCRIPTION, row.status, "charge_now").target
    now = business_now(conn, row.merchant_id)
    row = _update(conn, row, status=charging, next_charge_at=now, trial_notice_at=None)
    body = {
        "status": "queuing",
        "subscriptionId": row.id,
        "expectedAt": iso(now),
        "checkAt": f"/v1/subscriptions/{row.id}",
    }
    return Reply.json(202, body)


def public_get(conn: sa.Connection, public_hash: str) -> dict[str, Any]:
    """GET /v1/public/subscriptions/{hash}: the public view."""
    row = _by_hash(conn, public_hash)
    name = conn.execute(
        sa.select(tables.merchants.c.name).where(tables.merchants.c.id == row.merchant_id)
    ).scalar_one()
    return views.public_view(row, public_hash, str(name))


def portal_caller(conn: sa.Connection, public_hash: str, request_id: str) -> Caller:
    """Who a buyer portal request acts as, for its Idempotency-Key: keyed on the public
    hash (stored only as its SHA-256), in the subscription's merchant.

    Raises:
        ServiceError: SVC-GW-4004 for an unknown hash.
    """
    row = _by_hash(conn, public_hash)
    return Caller(
        api_key=f"public {hash_digest(public_hash)}",
        merchant_id=row.merchant_id,
        store_id=row.store_id,
        request_id=request_id,
    )


def public_cancel(conn: sa.Connection, public_hash: str, req: PublicCancelRequest) -> Reply:
    """POST /v1/public/subscriptions/{hash}/cancel (``atPeriodEnd`` defaults to true)."""
    row = _cancel(
        conn, _by_hash(conn, public_hash, lock=True), "public_cancel", req.atPeriodEnd, None
    )
    body = {
        "publicHash": public_hash,
        "status": row.status,
        "cancelAtPeriodEnd": row.cancel_at_period_end,
    }
    reply = Reply.json(200, body)
    reply.carries_bearer = True  # an idempotency record keeps it sealed
    return reply


def update_card_session(
    conn: sa.Connection, public_hash: str, checkout_base: str, portal_base: str, sealer: Sealer
) -> Reply:
    """POST /v1/public/subscriptions/{hash}/update-card-session: a ``card_update_only``
    checkout session bound to the subscription; only sessionId, checkoutUrl, expiresAt.

    The session returns the buyer to the portal, whose hash its row keeps sealed
    (`workbench.sandbox.subscriptions.portal_return`).
    """
    row = _by_hash(conn, public_hash)
    if row.status in SUBSCRIPTION.terminal:
        raise ServiceError("SVC-SUB-4090", f"subscription is {row.status}; its card cannot change")
    caller = Caller(
        api_key="portal",
        merchant_id=row.merchant_id,
        store_id=row.store_id,
        request_id="",
    )
    request = SessionRequest.model_validate(
        {
            "transactionId": f"cardupd_{secrets.token_hex(16)}",
            "currency": "TRY",
            "returnUrl": sealed_return(sealer, portal_base, row.id, public_hash),
            "customerId": row.customer_id,
            "mode": "card_update_only",
            "description": "Update the card of a subscription",
        }
    )
    reply = sessions.create_session(conn, caller, request, checkout_base, subscription_id=row.id)
    full = json.loads(reply.body)
    body = {k: full[k] for k in ("sessionId", "checkoutUrl", "expiresAt")}
    return Reply.json(201, body)


def replace_card(conn: sa.Connection, subscription_id: str, card_token: str) -> Row:
    """Put a new card on a subscription (the hosted ``card_update_only`` page calls this).

    The card is also saved to the customer. A ``past_due`` subscription is retried on
    the next reconciler tick. Emits ``subscription.card_updated``.

    Args:
        conn: the caller's write transaction.
        subscription_id: the session's ``subscription_id``.
        card_token: a ``tok_`` token the subscription's merchant may use.

    Returns:
        The updated subscription row.

    Raises:
        ServiceError: SVC-GW-4004 (no such subscription), SVC-VAL-4001 / 4002 (bad token),
            SVC-SUB-4090 (cancelled or expired).
    """
    found = conn.execute(
        sa.select(_S.c.merchant_id).where(_S.c.id == subscription_id)
    ).scalar_one_or_none()
    if found is None:
        raise ServiceError("SVC-GW-4004", "no such subscription")
    row = load(conn, str(found), subscription_id)
    if row.status in SUBSCRIPTION.terminal:
        raise ServiceError("SVC-SUB-4090", f"subscription is {row.status}; its card cannot change")
    card = _card_of(conn, row.merchant_id, row.customer_id, card_token)
    now = business_now(conn, row.merchant_id)
    values: dict[str, Any] = {
        "card_token": card.token,
        "card_last4": card.last4,
        "card_brand": card.brand,
    }
    if row.status == "past_due":
        values["next_charge_at"] = now
    saved = tables.saved_cards
    if (
        conn.execute(
            sa.select(saved.c.id).where(
                saved.c.customer_id == row.customer_id, saved.c.token == card.token
            )
        ).first()
        is None
    ):
        conn.execute(
            sa.insert(saved).values(
                merchant_id=row.merchant_id,
                customer_id=row.customer_id,
                token=card.token,
                is_default=False,
            )
        )
    row = _update(conn, row, **values)
    emit(conn, row, "subscription.card_updated", now, card_last4=card.last4, card_brand=card.brand)
    return row
