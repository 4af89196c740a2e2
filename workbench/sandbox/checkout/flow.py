"""What the hosted pages do: read a session for its page, pay it, finish a challenge.

Every completion runs in one write transaction that first locks the session row, so
two submits of the same page (a double click, two tabs, a replayed POST) are
serialised: the first charges and completes the session, the second finds it
``completed`` and is sent to the same ``returnUrl`` answer without a second charge.
The session's ``transactionId`` is also the charge's, so the payments fence would
refuse a second, different charge anyway.

A session completes only with a payment made for it: one under its ``transactionId``
of its amount and currency, by card for a card session and by TR QR for a ``qr`` one.
Session creation refuses a transactionId a payment already holds, and a charge under a
session's transactionId must match its terms; should a payment of other terms still be
found there (a charge that raced the session's creation on PostgreSQL), the page
refuses to be paid (SVC-GW-2001) rather than report that payment as the session's.

One session takes one payment attempt: a declined card or a failed challenge
completes the session with ``outcome=failed`` (the merchant opens a new session for
another try).

The buyer is told what happened to their own attempt. A charge the merchant made
through the API under the session's transactionId, and that the bank declined, is
the one payment that transactionId holds, so the buyer's card cannot be charged: the
page says so (``taken``: nothing was charged) instead of sending the buyer back with
``outcome=failed`` as though their card had been refused, and it leaves the session
as it is. (The page's own declined charge completes the session in its transaction,
so a declined payment under a session still open is never the page's.)
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal

import sqlalchemy as sa

from workbench.emvco import QrFields, build_payload
from workbench.sandbox import cards, tables
from workbench.sandbox.checkout.forms import CardForm
from workbench.sandbox.clock import business_now
from workbench.sandbox.context import Caller
from workbench.sandbox.errors import ServiceError
from workbench.sandbox.payments import acs, threeds
from workbench.sandbox.payments import service as payments
from workbench.sandbox.payments.models import ChargeRequest, ThreeDSCallbackRequest
from workbench.sandbox.payments.tables import payments as payments_table
from workbench.sandbox.return_urls import with_params
from workbench.sandbox.sessions import service as sessions
from workbench.sandbox.sessions.tables import sessions as sessions_table
from workbench.sandbox.storage import AnyRow, ReadPlan
from workbench.sandbox.subscriptions import service as subscriptions

if TYPE_CHECKING:
    pass

__all__ = [
    "Ended",
    "ForeignPayment",
    "PageView",
    "Redirect",
    "acs_return_url",
    "finish_challenge",
    "page_view",
    "pay_by_card",
    "pay_by_qr",
    "result_url",
]

Row = AnyRow
_S = sessions_table
_P = payments_table


@dataclass(frozen=True, slots=True)
class PageView:
    """What the page of an active session shows."""

    session_id: str
    mode: str
    merchant_name: str
    description: str | None
    amount: int
    installments: bool
    save_card: bool
    expires_at: datetime
    checkout_url: str
    qr_payload: str | None


@dataclass(frozen=True, slots=True)
class Ended:
    """A session whose page can no longer be used: ``missing``, ``expired``, ``completed``,
    or ``taken`` (its ``transactionId`` holds a payment that is not the session's)."""

    reason: Literal["missing", "expired", "completed", "taken"]
    return_url: str | None = None


@dataclass(frozen=True, slots=True)
class Redirect:
    """Send the buyer on: to ``returnUrl`` (``final``) or to the 3DS challenge page."""

    url: str
    final: bool = True


class ForeignPayment(ServiceError):
    """The session's ``transactionId`` holds a payment that was not made for it.

    Raised inside the page's transaction, so nothing is written; the page answers
    ``Ended("taken")`` with the session's ``returnUrl``.
    """

    def __init__(self, payment_id: str, return_url: str) -> None:
        super().__init__(
            "SVC-GW-2001",
            f"transactionId: already belongs to payment {payment_id}, which is not this "
            "checkout's; nothing was charged",
        )
        self.return_url = return_url


def result_url(return_url: str, **params: str | None) -> str:
    """``returnUrl`` with ``params`` added to its query (its query and fragment kept).

    The answer is ASCII, as a ``Location`` header must be, and is the address a browser
    reads ``returnUrl`` as (`workbench.sandbox.return_urls.with_params`): a non-ASCII
    path or query is percent-encoded as UTF-8 and a non-ASCII host becomes its IDNA
    (``xn--``) form; escapes already in ``returnUrl`` are kept as they are.
    """
    return with_params(return_url, params)


def _caller(session: Row, request_id: str) -> Caller:
    return Caller(
        api_key="hosted-checkout",
        merchant_id=session.merchant_id,
        store_id=session.store_id,
        request_id=request_id,
    )


def _back_link(session: Row) -> str | None:
    """Where an ended page links back to: the merchant's ``returnUrl``; none for a card
    update, whose return is the buyer's portal (its address is the subscription's bearer,
    and anyone holding the session id may open an ended page)."""
    return None if session.mode == "card_update_only" else session.return_url


def _state(conn: sa.Connection, session: Row | None) -> Ended | None:
    if session is None:
        return Ended("missing")
    if session.status == "completed":
        return Ended("completed", _back_link(session))
    if session.status == "expired" or session.expires_at <= business_now(conn, session.merchant_id):
        return Ended("expired", _back_link(session))
    return None


def _locked(conn: sa.Connection, session_id: str) -> Row | None:
    return conn.execute(sa.select(_S).where(_S.c.id == session_id).with_for_update()).first()


def _open(conn: sa.Connection, session_id: str) -> Row | Redirect | Ended:
    """The session, locked, while it can still be paid; else where its page goes instead:
    back to ``returnUrl`` once completed (a second submit charges nothing), or the
    completed (a card update: no link to the portal), expired or missing page."""
    session = _locked(conn, session_id)
    if session is not None and session.status == "completed" and _back_link(session):
        return Redirect(_outcome_url(session, _completed_with(conn, session)))
    ended = _state(conn, session)
    if ended is not None or session is None:
        return ended or Ended("missing")
    return session


def _payment_of(conn: sa.Connection, session: Row) -> Row | None:
    """The payment under the session's ``transactionId``, if any: one made for it.

    Raises:
        ForeignPayment: that payment is of other terms than the session's (SVC-GW-2001).
    """
    payment = conn.execute(
        sa.select(_P).where(
            _P.c.merchant_id == session.merchant_id,
            _P.c.transaction_id == session.transaction_id,
        )
    ).first()
    if payment is not None and not _made_for(session, payment):
        raise ForeignPayment(payment.id, session.return_url)
    return payment


def _not_the_buyers(session: Row, payment: Row | None) -> None:
    """Refuse the page when ``payment`` is a declined charge the merchant's API made.

    Raises:
        ForeignPayment: the session is still open and its transactionId holds a
            declined payment, which no submit of this page left (see the module
            docstring); nothing is charged and the buyer is told so.
    """
    if payment is not None and payment.status == "declined":
        raise ForeignPayment(payment.id, session.return_url)


def _made_for(session: Row, payment: Row) -> bool:
    """Whether ``payment`` pays ``session``: its amount and currency, its way of paying."""
    by_qr = payment.behaviour == "qr"
    return (
        int(payment.amount) == int(session.amount)
        and payment.currency == session.currency
        and by_qr == (session.mode == "qr")
    )


def _completed_with(conn: sa.Connection, session: Row) -> Row | None:
    """The payment a completed session recorded when it completed (none for a card update)."""
    if session.payment_id is None:
        return None
    return conn.execute(sa.select(_P).where(_P.c.id == session.payment_id)).first()


def _outcome_url(session: Row, payment: Row | None) -> str:
    """Where a finished session sends the buyer (the same answer every time)."""
    if session.mode == "card_update_only":
        return result_url(session.return_url, outcome="success", sessionId=session.id)
    if payment is None:
        return result_url(session.return_url, outcome="failed", sessionId=session.id)
    ok = payment.status in ("captured", "authorized")
    return result_url(
        session.return_url,
        outcome="success" if ok else "failed",
        paymentId=payment.id,
        sessionId=session.id,
        errorCode=None if ok else payment.decline_code,
    )


def page_view(conn: sa.Connection, session_id: str) -> PageView | Ended:
    """What GET ``checkoutUrl`` shows."""
    session = sessions.get_session(conn, session_id)
    ended = _state(conn, session)
    if ended is not None or session is None:
        return ended or Ended("missing")
    try:
        _not_the_buyers(session, _payment_of(conn, session))
    except ForeignPayment as exc:
        return Ended("taken", exc.return_url)
    name = conn.execute(
        sa.select(tables.merchants.c.name).where(tables.merchants.c.id == session.merchant_id)
    ).scalar_one()
    payload = None
    if session.mode == "qr":
        payload = build_payload(
            QrFields(
                merchant_id=session.merchant_id,
                merchant_name=str(name),
                session_id=session.id,
                amount=int(session.amount),
                reference=session.transaction_id,
            )
        )
    return PageView(
        session_id=session.id,
        mode=session.mode,
        merchant_name=str(name),
        description=session.description,
        amount=int(session.amount),
        installments=bool(session.installment_enabled) and session.mode == "payment",
        save_card=session.customer_id is not None and session.mode == "payment",
        expires_at=session.expires_at,
        checkout_url=session.checkout_url,
        qr_payload=payload,
    )


def _finish(conn: sa.Connection, session: Row, payment: Row | None) -> Redirect:
    done = sessions.complete_session(
        conn, session.id, payment_id=payment.id if payment is not None else None
    )
    return Redirect(_outcome_url(done, payment))


def _replay(conn: sa.Connection, session: Row, base_url: str) -> Redirect | None:
    """The answer for an open session already paid or being challenged; ``None`` if untouched.

    (A completed session never gets here: `_open` has sent it to its outcome.)
    """
    payment = _payment_of(conn, session)
    if payment is None:
        return None
    _not_the_buyers(session, payment)
    if payment.status == "pending_3ds":
        return Redirect(
            acs.challenge_url(base_url, payment.id, payment.correlation_id), final=False
        )
    return _finish(conn, session, payment)


def pay_by_card(
    conn: sa.Connection, session_id: str, form: CardForm, *, base_url: str, request_id: str
) -> Redirect | Ended:
    """The card form's submit: tokenize, charge by token (or replace a subscription's card).

    Raises:
        ServiceError: what tokenization or the charge refused (nothing is recorded then);
            the page shows its message and the buyer may correct the form.
    """
    session = _open(conn, session_id)
    if isinstance(session, Redirect | Ended):
        return session
    if session.mode == "qr":
        raise ServiceError("SVC-VAL-4001", "this session is paid by TR QR, not by card")
    replay = _replay(conn, session, base_url)
    if replay is not None:
        return replay
    if form.installments > 1 and not session.installment_enabled:
        raise ServiceError("SVC-VAL-4001", "installmentCount: this session offers no installments")
    now = business_now(conn, session.merchant_id)
    token = cards.tokenize_checked(
        conn, session.merchant_id, form.number, form.expiry_month, form.expiry_year, now
    )["token"]
    if session.mode == "card_update_only":
        subscriptions.replace_card(conn, session.subscription_id, token)
        return _finish(conn, session, None)
    saving = form.save_card and session.customer_id is not None
    request = ChargeRequest.model_validate(
        {
            "transactionId": session.transaction_id,
            "amount": int(session.amount),
            "currency": session.currency,
            "cardToken": token,
            "installmentCount": form.installments,
            "threeDSecure": True,
            "customerId": session.customer_id if saving else None,
            "saveCard": saving,
        }
    )
    caller = _caller(session, request_id)
    reads = payments.ChargeReads(ReadPlan(), caller, request)
    payments.charge(conn, caller, request, base_url, payments.fingerprint(request), reads)
    payment = _payment_of(conn, session)
    assert payment is not None
    if payment.status == "pending_3ds":
        return Redirect(
            acs.challenge_url(base_url, payment.id, payment.correlation_id), final=False
        )
    return _finish(conn, session, payment)


def pay_by_qr(conn: sa.Connection, session_id: str) -> Redirect | Ended:
    """The sandbox-only "pay from a bank app" action of a ``qr`` session."""
    session = _open(conn, session_id)
    if isinstance(session, Redirect | Ended):
        return session
    if session.mode != "qr":
        raise ServiceError("SVC-VAL-4001", "this session is not in mode qr")
    _payment_of(conn, session)  # refuses a payment that is not this session's
    payment = payments.record_qr_payment(conn, session)
    return _finish(conn, session, payment)


def acs_return_url(conn: sa.Connection, payment_id: str) -> str | None:
    """Where the ACS page posts the ``pares``: the paying session's 3DS return, if any."""
    payment = conn.execute(
        sa.select(_P.c.merchant_id, _P.c.transaction_id).where(_P.c.id == payment_id)
    ).first()
    if payment is None:
        return None
    session = conn.execute(
        sa.select(_S.c.checkout_url).where(
            _S.c.merchant_id == payment.merchant_id,
            _S.c.transaction_id == payment.transaction_id,
            _S.c.mode == "payment",
        )
    ).first()
    return None if session is None else f"{session.checkout_url}/3ds-callback"


def finish_challenge(
    conn: sa.Connection,
    acs_secret: str,
    session_id: str,
    data: dict[str, Any],
    *,
    base_url: str,
    request_id: str,
) -> Redirect | Ended:
    """The 3DS return: post the signed ``pares`` through the 3ds-callback, finish the session.

    Raises:
        ServiceError: a forged ``pares`` or one of another payment (SVC-PAY-4001).
    """
    pares, correlation_id = str(data.get("pares", "")), str(data.get("correlationId", ""))
    if not 0 < len(pares) <= 4096 or not 0 < len(correlation_id) <= 64:
        raise ServiceError("SVC-PAY-4001", "pares/correlationId: missing or malformed")
    session = _open(conn, session_id)
    if isinstance(session, Redirect | Ended):
        return session
    payment = _payment_of(conn, session)
    if payment is None:
        raise ServiceError("SVC-PAY-4090", "no 3-D Secure challenge is pending for this page")
    if payment.status == "pending_3ds":
        callback = ThreeDSCallbackRequest.model_validate(
            {"pares": pares, "correlationId": correlation_id}
        )
        threeds.threeds_callback(
            conn, acs_secret, _caller(session, request_id), payment.id, callback
        )
        payment = _payment_of(conn, session)
    return _finish(conn, session, payment)
