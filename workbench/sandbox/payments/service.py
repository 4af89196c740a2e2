"""Payments: card charge, capture, void, retrieval, public status, the TR QR payment.

Each function runs inside the caller's write transaction, locks the payment row it
changes, applies `workbench.spec.PAYMENT` through `workbench.sandbox.transitions.require`,
and records the events it causes. Completing a 3-D Secure challenge is `threeds`.

Commission: 2.49 % of the amount for a single payment plus 0.75 percentage point per
additional installment, rounded half up to whole kuruş; ``netAmount = amount -
commission`` (integer arithmetic only). Both are set when money moves, on capture (a
captured charge, a capture, a passed challenge that captures, a TR QR payment); until
then, and for good on a payment that never captures (authorized, voided, declined,
failed, pending a challenge), both are 0 (`settled_money`; docs/sandbox/decisions.md).
"""

from __future__ import annotations

import hashlib
import re
import secrets
from datetime import datetime
from typing import Any

import sqlalchemy as sa

from workbench.sandbox import cards, events, tables
from workbench.sandbox.clock import business_now, business_time, iso
from workbench.sandbox.context import Caller
from workbench.sandbox.errors import ServiceError, merchant_gone
from workbench.sandbox.idempotency import fingerprint
from workbench.sandbox.ids import new_id, new_uuid
from workbench.sandbox.payments import acs, expiry
from workbench.sandbox.payments.events import emit, payment_data
from workbench.sandbox.payments.models import ChargeRequest, VoidRequest
from workbench.sandbox.payments.tables import payments
from workbench.sandbox.replies import Reply, error_reply
from workbench.sandbox.sessions.service import take_transaction_id
from workbench.sandbox.sessions.tables import sessions
from workbench.sandbox.storage import AnyRow, PlannedRead, ReadPlan, insert_later, row_like
from workbench.sandbox.transitions import require
from workbench.spec import PAYMENT, IdPrefix, looks_like_card_number

__all__ = [
    "FAILED_3DS",
    "ChargeReads",
    "capture",
    "charge",
    "commission_for",
    "emit",
    "fence_answer",
    "fingerprint",
    "get_payment",
    "load",
    "new_payment",
    "payment_object",
    "public_status",
    "record_qr_payment",
    "refundable",
    "save_card",
    "settled_money",
    "void",
]

_P = payments
_TOKEN_RE = re.compile(r"^tok_[A-Za-z0-9_]{1,76}$")
_DECLINES = cards.CHARGE_DECLINES
#: The refusal of a payment whose 3-D Secure challenge failed (SVC-PAY-3003).
FAILED_3DS = "the buyer failed the 3-D Secure challenge"
#: The message of each refusal a payment can end in, for the fence's answer.
_REFUSALS = {code: message for code, message in _DECLINES.values()} | {"SVC-PAY-3003": FAILED_3DS}
Row = AnyRow
#: The payment's columns `_charge_body` reads.
_CHARGE_BODY_COLUMNS = (
    _P.c.id,
    _P.c.status,
    _P.c.amount,
    _P.c.currency,
    _P.c.commission,
    _P.c.net_amount,
    _P.c.card_mask,
    _P.c.card_brand,
    _P.c.card_type,
    _P.c.installment_count,
    _P.c.three_d_secure,
    _P.c.auth_code,
    _P.c.created_at,
    _P.c.completed_at,
    _P.c.correlation_id,
)
# The charge path's statements, built once (a charge is the sandbox's hottest request).
# The fence reads of a payment made under the same transactionId only the fingerprint
# and what `fence_answer` answers with: the driver describes every selected column on
# every execution, found or not.
_BY_TRANSACTION = (
    sa.select(_P.c.fingerprint, _P.c.decline_code, *_CHARGE_BODY_COLUMNS)
    .where(
        _P.c.merchant_id == sa.bindparam("f_merchant"),
        _P.c.transaction_id == sa.bindparam("f_transaction"),
    )
    .with_for_update()
)
_CUSTOMER = sa.select(tables.customers.c.id).where(
    tables.customers.c.id == sa.bindparam("f_customer"),
    tables.customers.c.merchant_id == sa.bindparam("f_merchant"),
)
# The merchant's checkout session with the charge's transactionId, if any.
_SESSION_OF_TRANSACTION = sa.and_(
    sessions.c.merchant_id == sa.bindparam("f_merchant"),
    sessions.c.transaction_id == sa.bindparam("f_transaction"),
)
_SESSION_CALLBACK = sa.select(sessions.c.callback_url, sessions.c.customer_id).where(
    _SESSION_OF_TRANSACTION
)
#: Session modes a card charge can settle (``qr`` is paid by a bank app, and a
#: ``card_update_only`` session has nothing to pay).
_CARD_MODES = frozenset({"payment"})
# What a new charge reads besides the fence, in one statement: the terms a charge under
# a session's transactionId must meet (the session columns are NULL when there
# is none), the merchant's clock offset and the store's webhook (where the
# event goes when there is no session callback).
_CHARGE_CONTEXT = (
    sa.select(
        sessions.c.mode,
        sessions.c.status.label("session_status"),
        sessions.c.expires_at,
        sessions.c.amount,
        sessions.c.currency,
        sessions.c.installment_enabled,
        sessions.c.callback_url,
        tables.merchants.c.clock_offset_us,
        sa.select(tables.stores.c.webhook_url)
        .where(tables.stores.c.id == sa.bindparam("f_store"))
        .scalar_subquery()
        .label("store_webhook"),
    )
    .select_from(tables.merchants.outerjoin(sessions, _SESSION_OF_TRANSACTION))
    .where(tables.merchants.c.id == sa.bindparam("f_merchant"))
)
_INSERT = sa.insert(_P)


def commission_for(amount: int, installments: int) -> int:
    """The commission in kuruş (see the module docstring)."""
    basis_points = 249 + 75 * (installments - 1)
    return (amount * basis_points + 5_000) // 10_000


def settled_money(status: str, amount: int, installments: int) -> tuple[int, int]:
    """``(commission, netAmount)`` of a payment in ``status``: set on capture, else ``(0, 0)``.

    The spec sets both on capture and posts no ledger entries for an authorization or a
    void; a payment that moved no money shows none taken and none due.
    """
    if status != "captured":
        return 0, 0
    commission = commission_for(amount, installments)
    return commission, amount - commission


def new_payment(
    *,
    merchant_id: str,
    store_id: str,
    transaction_id: str,
    fingerprint: str,
    amount: int,
    currency: str,
    card: dict[str, Any],
    to: str,
    now: datetime,
    installment_count: int = 1,
    three_d_secure: bool = False,
    capture: bool = True,
    customer_id: str | None = None,
    save_card: bool = False,
    callback_url: str | None = None,
    decline_code: str | None = None,
) -> dict[str, Any]:
    """A new payment's row, the one place it is built (card charge, TR QR, renewal).

    Its status is the state table's: ``to`` must be an outcome of a new payment's
    ``charge`` (`transitions.require`), else SVC-PAY-4090. The money and the
    authorization follow from it: an approved payment (``authorized``, ``captured``) gets
    an authorization code and its completion time, a captured one its commission and
    netAmount (`settled_money`); a ``pending_3ds`` one a correlationId.

    Args:
        card: the card columns (``card_token``, ``behaviour``, ``card_mask``,
            ``card_brand``, ``card_type``, ``bin``).
        to: the status the charge leads to.
        now: the merchant's business time.
    """
    status = require(PAYMENT, None, "charge", to=to).target
    approved = status in ("authorized", "captured")
    commission, net = settled_money(status, amount, installment_count)
    return {
        "id": new_id(IdPrefix.PAYMENT),
        "merchant_id": merchant_id,
        "store_id": store_id,
        "transaction_id": transaction_id,
        "fingerprint": fingerprint,
        "status": status,
        "amount": amount,
        "currency": currency,
        "commission": commission,
        "net_amount": net,
        **card,
        "installment_count": installment_count,
        "three_d_secure": three_d_secure,
        "capture": capture,
        "auth_code": f"{secrets.randbelow(10**6):06d}" if approved else None,
        "correlation_id": new_uuid() if status == "pending_3ds" else None,
        "customer_id": customer_id,
        "save_card": save_card,
        "callback_url": callback_url,
        "refunded_amount": 0,
        "pending_refund_amount": 0,
        "decline_code": decline_code,
        "created_at": now,
        "completed_at": now if approved else None,
    }


def load(conn: sa.Connection, merchant_id: str, payment_id: str) -> Row:
    """The merchant's payment, locked for update.

    Raises:
        ServiceError: SVC-GW-4004 when it does not exist *for this merchant* (never 403).
    """
    query = sa.select(_P).where(_P.c.id == payment_id, _P.c.merchant_id == merchant_id)
    row = conn.execute(query.with_for_update()).first()
    if row is None:
        raise ServiceError("SVC-GW-4004", "no such payment for this merchant")
    return row


def _charge_body(row: Row, acs_url: str | None = None) -> dict[str, Any]:
    """The charge response of the payment ``row`` (only its `_CHARGE_BODY_COLUMNS`)."""
    body: dict[str, Any] = {
        "paymentId": row.id,
        "status": row.status,
        "amount": row.amount,
        "currency": row.currency,
        "commission": row.commission,
        "netAmount": row.net_amount,
        "cardMask": row.card_mask,
        "cardBrand": row.card_brand,
        "cardType": row.card_type,
        "installmentCount": row.installment_count,
        "threeDSecure": row.three_d_secure,
        "authCode": row.auth_code,
        "createdAt": iso(row.created_at),
        "completedAt": iso(row.completed_at),
    }
    if row.status == "pending_3ds":
        body["correlationId"] = row.correlation_id
        body["acsUrl"] = acs_url
    return body


def refundable(row: Row) -> int:
    """What may still be refunded: captured amount minus completed *and* in-flight refunds."""
    if row.status != "captured":
        return 0
    return int(row.amount - row.refunded_amount - row.pending_refund_amount)


def payment_object(row: Row) -> dict[str, Any]:
    """The spec's payment object."""
    return {
        "id": row.id,
        "merchantId": row.merchant_id,
        "transactionId": row.transaction_id,
        "status": row.status,
        "amount": row.amount,
        "currency": row.currency,
        "commission": row.commission,
        "netAmount": row.net_amount,
        "cardMask": row.card_mask,
        "cardBrand": row.card_brand,
        "cardType": row.card_type,
        "bin": row.bin,
        "installmentCount": row.installment_count,
        "threeDSecure": row.three_d_secure,
        "refundAmount": row.refunded_amount,
        "refundableAmount": refundable(row),
        "createdAt": iso(row.created_at),
        "completedAt": iso(row.completed_at),
    }


def _check_token(token: str) -> None:
    if looks_like_card_number(token):
        raise ServiceError(
            "SVC-VAL-4002",
            "cardToken: raw card numbers are never accepted; tokenize the card first "
            "(POST /v1/cards/tokens) and send the tok_ token",
        )
    if not _TOKEN_RE.match(token):
        raise ServiceError("SVC-VAL-4001", "cardToken: must be a vault token starting with tok_")


def _customer_exists(conn: sa.Connection, merchant_id: str, customer_id: str) -> bool:
    params = {"f_customer": customer_id, "f_merchant": merchant_id}
    return conn.execute(_CUSTOMER, params).first() is not None


def _session_callback(conn: sa.Connection, merchant_id: str, transaction_id: str) -> Row | None:
    params = {"f_merchant": merchant_id, "f_transaction": transaction_id}
    return conn.execute(_SESSION_CALLBACK, params).first()


def save_card(conn: sa.Connection, row: Row) -> None:
    """Attach the card to the customer if asked and the customer is the session's."""
    if not row.save_card or not row.customer_id:
        return
    session = _session_callback(conn, row.merchant_id, row.transaction_id)
    if session is None or session.customer_id != row.customer_id:
        return
    saved = tables.saved_cards
    exists = conn.execute(
        sa.select(saved.c.id).where(
            saved.c.customer_id == row.customer_id, saved.c.token == row.card_token
        )
    ).first()
    if exists is None:
        conn.execute(
            sa.insert(saved).values(
                merchant_id=row.merchant_id,
                customer_id=row.customer_id,
                token=row.card_token,
                is_default=False,
            )
        )


def _check_session_terms(session: Row, req: ChargeRequest) -> None:
    """A charge under a checkout session's ``transactionId`` pays that session, as is.

    Raises:
        ServiceError: SVC-VAL-4001 naming the field that differs from the session.
    """
    if session.mode not in _CARD_MODES:
        raise ServiceError(
            "SVC-VAL-4001",
            f"transactionId: names a checkout session in mode {session.mode}, "
            "which a card charge cannot pay",
        )
    if req.amount != session.amount:
        raise ServiceError(
            "SVC-VAL-4001",
            f"amount: must equal the checkout session's amount ({session.amount}) "
            "for this transactionId",
        )
    if req.currency != session.currency:
        raise ServiceError(
            "SVC-VAL-4001",
            f"currency: must equal the checkout session's currency ({session.currency})",
        )
    if req.installmentCount > 1 and not session.installment_enabled:
        raise ServiceError(
            "SVC-VAL-4001",
            "installmentCount: the checkout session for this transactionId offers no installments",
        )


def _check_session_open(session: Row, now: datetime) -> None:
    """A charge under a session's ``transactionId`` settles it only while it is open.

    An expired session (marked so, or past ``expiresAt`` on the business clock before the
    reconciler marked it) and a completed one take no new payment; the very charge that
    paid it is the fence's, answered before this.

    Raises:
        ServiceError: SVC-SES-4090, as the hosted page would answer.
    """
    if session.session_status == "completed":
        state = "completed"
    elif session.session_status == "expired" or session.expires_at <= now:
        state = "expired"
    else:
        return
    raise ServiceError(
        "SVC-SES-4090",
        f"transactionId: the checkout session for this transactionId is {state}; "
        "it takes no new payment",
    )


class ChargeReads:
    """The reads `charge` makes for a new payment, declared on ``plan`` in its order.

    Declared on the plan the charge's transaction runs with (`Database.atransact`), they
    go to a PostgreSQL server with the transaction's first statement.
    """

    __slots__ = ("context", "existing")

    def __init__(self, plan: ReadPlan, caller: Caller, req: ChargeRequest) -> None:
        #: The session's terms, the merchant's clock offset, the store's webhook.
        self.context: PlannedRead = plan.read(
            _CHARGE_CONTEXT,
            {
                "f_merchant": caller.merchant_id,
                "f_store": caller.store_id,
                "f_transaction": req.transactionId,
            },
        )
        #: The payment already made under the charge's ``transactionId`` (the fence).
        self.existing: PlannedRead = plan.read(
            _BY_TRANSACTION,
            {"f_merchant": caller.merchant_id, "f_transaction": req.transactionId},
        )


def fence_answer(row: Row, base_url: str, request_id: str) -> Reply:
    """The ``transactionId`` fence's answer: the payment as it is now.

    The charge-response shape with the current status (what ``GET /v1/payments/{id}``
    would report), ``acsUrl`` only while the challenge is still pending; a payment
    that ended refused answers its refusal, with this request's ``requestId``.
    """
    if row.status in ("declined", "failed") and row.decline_code in _REFUSALS:
        return error_reply(str(row.decline_code), _REFUSALS[str(row.decline_code)], request_id)
    acs_url = None
    if row.status == "pending_3ds":
        acs_url = acs.challenge_url(base_url, row.id, row.correlation_id)
    return Reply.json(200, _charge_body(row, acs_url))


def charge(
    conn: sa.Connection,
    caller: Caller,
    req: ChargeRequest,
    base_url: str,
    digest: str,
    reads: ChargeReads,
) -> Reply:
    """POST /v1/payments/card: 201 with the new payment, or the fence's answer.

    ``digest`` is ``fingerprint(req)``, computed before the transaction (it needs no
    lock); ``reads`` this charge's reads, declared on the plan its transaction runs
    with (an unannounced `ReadPlan` runs them one by one).
    """
    _check_token(req.cardToken)
    context = reads.context.first(conn)
    if context is None:
        raise merchant_gone()  # deleted since its key was checked
    # The session's terms first: a charge that does not match its session gets the
    # same answer whether or not the session was paid meanwhile.
    session = context if context.mode is not None else None
    if session is not None:
        _check_session_terms(session, req)
    existing = reads.existing.first(conn)
    if existing is not None and existing.fingerprint == digest:
        return fence_answer(existing, base_url, caller.request_id)
    now = business_time(int(context.clock_offset_us))
    if session is not None:
        _check_session_open(session, now)
    if existing is not None:
        raise ServiceError(
            "SVC-GW-2001",
            "transactionId was already used for a charge with a different payload",
        )
    card = cards.find_token(conn, caller.merchant_id, req.cardToken)
    if card is None:
        raise ServiceError("SVC-VAL-4001", "cardToken: no such token for this merchant")
    if req.customerId is not None and not _customer_exists(
        conn, caller.merchant_id, req.customerId
    ):
        raise ServiceError("SVC-VAL-4001", "customerId: no such customer for this merchant")
    if card.card_type == "debit" and req.installmentCount > 1:
        raise ServiceError(
            "SVC-VAL-4001", "installmentCount: debit cards take a single installment"
        )
    decline = _DECLINES.get(card.behaviour)
    if decline is not None:
        status = "declined"
    elif card.behaviour in ("3ds_challenge", "3ds_fail") and req.threeDSecure:
        status = "pending_3ds"
    else:
        status = "captured" if req.capture else "authorized"
    values = new_payment(
        merchant_id=caller.merchant_id,
        store_id=caller.store_id,
        transaction_id=req.transactionId,
        fingerprint=digest,
        amount=req.amount,
        currency=req.currency,
        card={
            "card_token": card.token,
            "behaviour": card.behaviour,
            "card_mask": cards.mask_of(card),
            "card_brand": card.brand,
            "card_type": card.card_type,
            "bin": card.bin,
        },
        to=status,
        now=now,
        installment_count=req.installmentCount,
        three_d_secure=req.threeDSecure,
        capture=req.capture,
        customer_id=req.customerId,
        save_card=req.saveCard,
        callback_url=session.callback_url if session is not None else None,
        decline_code=decline[0] if decline is not None else None,
    )
    if decline is not None:
        reply = error_reply(*decline, caller.request_id)
    else:
        acs_url = None
        if status == "pending_3ds":
            acs_url = acs.challenge_url(base_url, values["id"], values["correlation_id"])
        reply = Reply.json(201, _charge_body(row_like(_P, values), acs_url))
    values.update(response_status=reply.status, response_body=reply.body)
    # The fence's duplicate still raises, at the COMMIT on PostgreSQL.
    payment = insert_later(conn, _INSERT, values)
    if session is None:  # a session's transactionId is the session's already
        take_transaction_id(conn, caller.merchant_id, req.transactionId)
    if payment.status == "captured":
        save_card(conn, payment)
    kind = "payment.3ds_pending" if status == "pending_3ds" else f"payment.{status}"
    events.emit(  # to the store's webhook read with the charge's other reads
        conn,
        merchant_id=payment.merchant_id,
        store_id=payment.store_id,
        data=payment_data(payment, kind),
        now=now,
        target_url=payment.callback_url or context.store_webhook,
        look_up_webhook=False,
    )
    return reply


def record_qr_payment(conn: sa.Connection, session: Row) -> Row:
    """A TR QR payment for a checkout session, captured at once (the buyer's bank app paid).

    No card is involved: the card fields hold ``tr_qr`` (brand and type) and empty
    mask, bin and token. The session's ``transactionId`` is the payment's, so the
    fence still holds one payment per session. Emits ``payment.captured`` to the
    session's ``callbackUrl`` (or the store webhook).

    Args:
        conn: the caller's write transaction, which has locked the session row.
        session: the ``qr`` mode session being paid.

    Returns:
        The payment row (an existing one when this session was already paid).
    """
    existing = conn.execute(
        sa.select(_P).where(
            _P.c.merchant_id == session.merchant_id,
            _P.c.transaction_id == session.transaction_id,
        )
    ).first()
    if existing is not None:
        return existing
    values = new_payment(
        merchant_id=session.merchant_id,
        store_id=session.store_id,
        transaction_id=session.transaction_id,
        fingerprint=hashlib.sha256(f"qr:{session.id}".encode()).hexdigest(),
        amount=int(session.amount),
        currency=session.currency,
        card={"behaviour": "qr", **cards.QR_CARD_FIELDS},
        to="captured",
        now=business_now(conn, session.merchant_id),
        customer_id=session.customer_id,
        callback_url=session.callback_url,
    )
    now = values["created_at"]
    reply = Reply.json(201, _charge_body(row_like(_P, values)))
    values.update(response_status=reply.status, response_body=reply.body)
    payment = insert_later(conn, _INSERT, values)
    emit(conn, payment, "payment.captured", now, method="tr_qr")
    return payment


def _capture_body(row: Row) -> dict[str, Any]:
    return {
        "id": row.id,
        "status": row.status,
        "amount": row.amount,
        "currency": row.currency,
        "commission": row.commission,
        "netAmount": row.net_amount,
        "refundableAmount": refundable(row),
        "completedAt": iso(row.completed_at),
    }


def capture(conn: sa.Connection, caller: Caller, payment_id: str) -> Reply:
    """POST /v1/payments/{id}/capture: full amount; a repeat on a captured payment is a no-op.

    An authorization past its lifetime is voided first and the capture answers 409
    SVC-PAY-4090 naming the expiry (`expiry`); the void is committed with that answer.
    """
    row = load(conn, caller.merchant_id, payment_id)
    expired = expiry.expire_if_due(conn, row, business_now(conn, caller.merchant_id)) or (
        row if expiry.expired_reason(row) else None
    )
    if expired is not None:
        message = f"payment is voided: {expiry.expired_reason(expired)}; it cannot be captured"
        return error_reply("SVC-PAY-4090", message, caller.request_id)
    step = require(PAYMENT, row.status, "capture")
    if not step.idempotent:
        now = business_now(conn, caller.merchant_id)
        commission, net = settled_money(step.target, row.amount, row.installment_count)
        conn.execute(
            sa.update(_P)
            .where(_P.c.id == payment_id)
            .values(status=step.target, completed_at=now, commission=commission, net_amount=net)
        )
        row = load(conn, caller.merchant_id, payment_id)
        save_card(conn, row)
        emit(conn, row, "payment.captured", now)
    return Reply.json(200, _capture_body(row))


def void(conn: sa.Connection, caller: Caller, payment_id: str, req: VoidRequest) -> Reply:
    """POST /v1/payments/{id}/void: release an authorization; a repeat is a no-op.

    An authorization past its lifetime is voided by its expiry first (that reason stays);
    this void is then the idempotent repeat.
    """
    row = load(conn, caller.merchant_id, payment_id)
    row = expiry.expire_if_due(conn, row, business_now(conn, caller.merchant_id)) or row
    step = require(PAYMENT, row.status, "void")
    if not step.idempotent:
        now = business_now(conn, caller.merchant_id)
        conn.execute(
            sa.update(_P)
            .where(_P.c.id == payment_id)
            .values(status=step.target, void_reason=req.reason)
        )
        row = load(conn, caller.merchant_id, payment_id)
        emit(conn, row, "payment.voided", now, reason=req.reason)
    body = {"id": row.id, "status": row.status, "amount": row.amount, "currency": row.currency}
    return Reply.json(200, body)


def get_payment(conn: sa.Connection, caller: Caller, payment_id: str) -> dict[str, Any]:
    """GET /v1/payments/{id}."""
    return payment_object(load(conn, caller.merchant_id, payment_id))


def public_status(conn: sa.Connection, payment_id: str) -> dict[str, Any]:
    """GET /v1/payments/{id}/public-status: the id is the bearer; only id and status."""
    row = conn.execute(sa.select(_P.c.id, _P.c.status).where(_P.c.id == payment_id)).first()
    if row is None:
        raise ServiceError("SVC-GW-4004", "no such payment")
    return {"paymentId": row.id, "status": row.status}
