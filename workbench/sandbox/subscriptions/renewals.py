"""The reconciler's subscription work: renewals, trial ends, retries, period-end cancels.

A charge runs in three steps, each its own transaction, so a server stopped at any
point finishes the cycle exactly once after a restart. Each step takes a batch of due
subscriptions (`BATCH_SIZE`) and writes it in a few statements (one INSERT or UPDATE of
many rows each), so a pass costs a few statements per batch rather than a dozen per
subscription, and holds one batch in memory however many fall due:

1. **claim**: for each due subscription a ``subscription_charges`` row is inserted in
   state ``processing`` with a fresh card-charge ``transactionId`` from an id space
   no merchant can reach (`renewal_transaction_id`), and the subscription points at
   it (``claim_id``) so no second claim is made. The due rows are read ``FOR UPDATE
   SKIP LOCKED``: on PostgreSQL, passes of other workers or hosts claiming at the same
   time take the rows this one has not locked, so they split the work.
2. **charge**: the subscription rows are locked and checked again; one cancelled, paused
   or expired since the claim (or whose cancel at period end was scheduled since) is
   not charged: the claim becomes ``abandoned``. Otherwise the saved card is charged
   under that ``transactionId``. The payment is looked up by it first (the fence of
   the card charge), so a resumed claim never charges twice; the row moves to
   ``charged``.
3. **finish**: the outcome moves the subscription (cycle, next charge, status), the
   lifecycle events are recorded and the row becomes ``done`` (`outcome.finish`).

Concurrency with the caller's actions: no renewal is torn. The subscription row is the
one lock: steps 2 and 3 take it for each subscription of their batch (one ``SELECT …
ORDER BY id FOR UPDATE``, always in that order, so two passes never deadlock; SQLite's
single writer serialises the same way), and so does every caller action
(`service.load`), which then applies a ``charged`` claim's outcome itself before its
own change (`outcome.finish_pending`). A cancel or pause therefore lands in one of
three places:

- before step 2 commits: it commits first, and step 2 abandons the claim. No charge;
  the cancel's answer and event show the old cycle, which is the last one charged.
- while step 2 holds the lock: it waits; then it finishes the charged cycle and
  cancels, in one transaction. Its answer and event show the charged cycle, and
  ``subscription.renewed`` comes before ``subscription.cancelled``.
- after step 3: it sees the finished cycle.

A cancel that meets a batch waits for that batch's transaction, not for the whole pass.
Step 3 reads the claim again under the lock and skips one already ``done``, so the
outcome is applied exactly once and nothing about a subscription is recorded after its
cancellation. Events are rows with an increasing ``seq`` inserted under the same row
lock, so one subscription's events are listed (and delivered) in commit order.

Rows left ``processing`` or ``charged`` are due at once: the next pass resumes them
before claiming anything new.

Retry schedule of a ``past_due`` subscription: 1, 3 and 5 days after the first failed
charge (`RETRY_OFFSETS`); a failed charge with no scheduled retry left makes it
``expired``. A charge at the scheduled period boundary keeps the anchor; any other
successful charge (charge-now, resume, a retry) starts a new period at that moment.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa

from workbench.sandbox import cards, events
from workbench.sandbox.payments.service import new_payment
from workbench.sandbox.payments.tables import payments
from workbench.sandbox.replies import dumps
from workbench.sandbox.storage import AnyRow
from workbench.sandbox.subscriptions.outcome import (
    CHARGEABLE,
    RETRY_OFFSETS,
    emit,
    emit_to,
    finish_many,
    store_webhooks,
)
from workbench.sandbox.subscriptions.schedule import after
from workbench.sandbox.subscriptions.tables import subscription_charges, subscriptions
from workbench.sandbox.transitions import require
from workbench.spec import ERRORS, SUBSCRIPTION
from workbench.spec.events import EventData, event_type

if TYPE_CHECKING:
    from workbench.sandbox.storage import Database

__all__ = [
    "BATCH_SIZE",
    "RETRY_OFFSETS",
    "RenewalWork",
    "charge_saved_card",
    "renewal_transaction_id",
]

_S = subscriptions
_C = subscription_charges
_P = payments
Row = AnyRow
_CHARGEABLE = CHARGEABLE
#: Subscriptions one transaction of each step handles: the floor of inserting a
#: renewal's rows is near its lowest from a few hundred rows a transaction, and what a
#: pass holds in memory is one batch, however many subscriptions fall due.
BATCH_SIZE = 500
#: Batches one pass claims at most (a guard; each batch is BATCH_SIZE subscriptions).
_MAX_BATCHES = 100_000


def renewal_transaction_id(subscription_id: str, attempt: int) -> str:
    """The ``transactionId`` of a subscription's charge attempt.

    It starts with ``renewal ``, a prefix refused on a merchant's ``transactionId``
    (``limits.RENEWAL_TRANSACTION_PREFIX``): no merchant charge, however the id is
    guessed, can take a renewal's place in the payments fence.
    """
    return f"renewal {subscription_id} {attempt}"


def charge_saved_card(
    conn: sa.Connection, sub: Row, transaction_id: str, now: datetime
) -> tuple[str, str]:
    """Charge the subscription's card once per ``transactionId``; ``(paymentId, status)``.

    A merchant-initiated charge: no 3-D Secure, captured at once, or ``declined``
    (every renewal on ``tok_test_renewal_fails`` is). A payment already recorded under
    ``transactionId`` is returned unchanged (the fence).
    """
    charged = _charge_many(conn, [(sub, transaction_id)], now)
    return charged[transaction_id]


def _charge_many(
    conn: sa.Connection, charges: Sequence[tuple[Row, str]], now: datetime
) -> dict[str, tuple[str, str]]:
    """`charge_saved_card` for many (subscription, transactionId) pairs of one merchant:
    the fence read in one statement, the new payments written in one, their events in
    order; ``{transactionId: (paymentId, status)}``."""
    if not charges:
        return {}
    merchant_id = charges[0][0].merchant_id
    wanted = [transaction_id for _, transaction_id in charges]
    charged: dict[str, tuple[str, str]] = {
        str(found.transaction_id): (str(found.id), str(found.status))
        for found in conn.execute(
            sa.select(_P.c.id, _P.c.status, _P.c.transaction_id).where(
                _P.c.merchant_id == merchant_id, _P.c.transaction_id.in_(wanted)
            )
        )
    }
    cards_of: dict[str, cards.CardRecord | None] = {}
    made: list[dict[str, Any]] = []
    datas: list[tuple[Row, EventData]] = []
    for sub, transaction_id in charges:
        if transaction_id in charged:
            continue
        token = sub.card_token
        if token not in cards_of:
            cards_of[token] = cards.find_token(conn, merchant_id, token)
        values, data = _new_charge(sub, cards_of[token], transaction_id, now)
        made.append(values)
        datas.append((sub, data))
        charged[transaction_id] = (str(values["id"]), str(values["status"]))
    if made:
        conn.execute(sa.insert(_P), made)
        webhooks = store_webhooks(conn, {sub.store_id for sub, _ in datas})
        for sub, data in datas:
            events.emit(
                conn,
                merchant_id=sub.merchant_id,
                store_id=sub.store_id,
                now=now,
                data=data,
                target_url=webhooks.get(sub.store_id),
                look_up_webhook=False,
            )
    return charged


def _new_charge(
    sub: Row, card: cards.CardRecord | None, transaction_id: str, now: datetime
) -> tuple[dict[str, Any], EventData]:
    """The payment row of one renewal charge and its ``payment.*`` event; nothing written."""
    behaviour = card.behaviour if card is not None else "declined"
    decline = cards.RENEWAL_DECLINES.get(behaviour)
    amount = int(sub.amount_minor)
    values = new_payment(
        merchant_id=sub.merchant_id,
        store_id=sub.store_id,
        transaction_id=transaction_id,
        fingerprint=hashlib.sha256(transaction_id.encode()).hexdigest(),
        amount=amount,
        currency=sub.currency,
        card={
            "card_token": sub.card_token,
            "behaviour": behaviour,
            "card_mask": cards.mask_of(card) if card else "******",
            "card_brand": sub.card_brand,
            "card_type": card.card_type if card else "credit",
            "bin": card.bin if card else "000000",
        },
        to="declined" if decline else "captured",
        now=now,
        decline_code=decline,
    )
    payment_id, status = str(values["id"]), str(values["status"])
    body: dict[str, Any] = (
        {"code": decline, "message": ERRORS[decline].cause, "requestId": ""}
        if decline
        else {"paymentId": payment_id, "status": status, "amount": amount, "currency": "TRY"}
    )
    values.update(
        response_status=ERRORS[decline].http_status if decline else 201,
        response_body=dumps(body),
    )
    data = event_type(f"payment.{status}").data(
        payment_id=payment_id,
        transaction_id=transaction_id,
        status=status,
        amount=amount,
        currency=sub.currency,
        subscription_id=sub.id,
    )
    return values, data


def _kind(sub: Row) -> str:
    if sub.status == "trialing":
        return "trial_end"
    if sub.status == "charging":
        return "charge_now"
    if sub.status == "past_due":
        return "retry"
    scheduled = after(sub.anchor_at, sub.interval_unit, sub.interval_count, sub.periods)
    return "renewal" if sub.next_charge_at == scheduled else "immediate"


class RenewalWork:
    """Reconciler work for subscriptions (see the module docstring).

    Args:
        db: the sandbox database.
        batch_size: subscriptions claimed, charged and finished per transaction.
    """

    name = "subscriptions"

    def __init__(self, db: Database, batch_size: int = BATCH_SIZE) -> None:
        self.db = db
        self.batch_size = batch_size

    def pending_merchants(self, conn: sa.Connection) -> set[str]:
        """Merchants with an unfinished charge, a renewal or a trial-end notice ahead."""
        selects = (
            sa.select(_C.c.merchant_id).where(_C.c.state.in_(("processing", "charged"))),
            sa.select(_S.c.merchant_id).where(_S.c.next_charge_at.is_not(None)),
            sa.select(_S.c.merchant_id).where(_S.c.trial_notice_at.is_not(None)),
        )
        return {m for select in selects for m in conn.execute(select.distinct()).scalars()}

    def next_due(self, conn: sa.Connection, merchant_id: str) -> datetime | None:
        """The earliest of: a charge left unfinished, a due charge, a trial-end notice."""
        candidates = [
            conn.execute(
                sa.select(sa.func.min(_C.c.due_at)).where(
                    _C.c.merchant_id == merchant_id, _C.c.state.in_(("processing", "charged"))
                )
            ).scalar_one_or_none(),
            conn.execute(
                sa.select(sa.func.min(_S.c.next_charge_at)).where(
                    _S.c.merchant_id == merchant_id, _S.c.next_charge_at.is_not(None)
                )
            ).scalar_one_or_none(),
            conn.execute(
                sa.select(sa.func.min(_S.c.trial_notice_at)).where(
                    _S.c.merchant_id == merchant_id, _S.c.trial_notice_at.is_not(None)
                )
            ).scalar_one_or_none(),
        ]
        present = [c for c in candidates if c is not None]
        return min(present) if present else None

    def run(self, merchant_id: str, now: datetime, deadline: float) -> int:
        """Resume unfinished charges, send trial notices, then claim, charge and finish
        every subscription due by ``now``, a batch at a time (repeatedly, so missed
        cycles catch up)."""
        done = self.send_trial_notices(merchant_id, now)
        while True:
            unfinished = self.unfinished_claims(merchant_id)
            if not unfinished:
                break
            self.charge_claims(merchant_id, unfinished, now)
            done += self.finish_claims(merchant_id, unfinished, now)
        for _ in range(_MAX_BATCHES):
            settled, claimed = self.claim_due(merchant_id, now)
            if not claimed and not settled:
                break
            done += settled
            if claimed:
                self.charge_claims(merchant_id, claimed, now)
                done += self.finish_claims(merchant_id, claimed, now)
        return done

    def send_trial_notices(self, merchant_id: str, now: datetime) -> int:
        """``subscription.trial_will_end`` for every trial whose notice time has come,
        a batch per transaction."""
        sent = 0
        while True:
            with self.db.write() as conn:
                rows = conn.execute(
                    sa.select(_S)
                    .where(_S.c.merchant_id == merchant_id, _S.c.trial_notice_at <= now)
                    .order_by(_S.c.trial_notice_at)
                    .limit(self.batch_size)
                    .with_for_update(skip_locked=True)
                ).all()
                if not rows:
                    return sent
                conn.execute(
                    sa.update(_S)
                    .where(_S.c.id.in_([row.id for row in rows]))
                    .values(trial_notice_at=None)
                )
                webhooks = store_webhooks(conn, {row.store_id for row in rows})
                for row in rows:
                    fields = {"trial_end_at": row.trial_end_at}
                    emit_to(
                        conn,
                        row._asdict(),
                        "subscription.trial_will_end",
                        now,
                        fields,
                        webhooks.get(row.store_id),
                    )
            sent += len(rows)

    def unfinished_claims(self, merchant_id: str) -> list[int]:
        """Claims a stopped pass left behind (``processing`` or ``charged``), oldest first."""
        with self.db.read() as conn:
            return [
                int(i)
                for i in conn.execute(
                    sa.select(_C.c.id)
                    .where(
                        _C.c.merchant_id == merchant_id,
                        _C.c.state.in_(("processing", "charged")),
                    )
                    .order_by(_C.c.id)
                    .limit(self.batch_size)
                ).scalars()
            ]

    def claim_due(self, merchant_id: str, now: datetime) -> tuple[int, list[int]]:
        """Step 1 for one batch. Returns (subscriptions settled without a charge, claimed
        charge ids).

        The due rows are locked ``FOR UPDATE SKIP LOCKED``: on PostgreSQL another pass
        (another worker, another host) claiming at the same time takes other rows, and
        none is claimed twice (a claimed row no longer matches ``claim_id IS NULL``).
        """
        settled = 0
        with self.db.write() as conn:
            query = (
                sa.select(_S)
                .where(
                    _S.c.merchant_id == merchant_id,
                    _S.c.next_charge_at <= now,
                    _S.c.claim_id.is_(None),
                )
                # The due index's own order: no sort of every due row per batch.
                .order_by(_S.c.next_charge_at)
                .limit(self.batch_size)
                .with_for_update(skip_locked=True)
            )
            stopped: list[str] = []
            wanted: list[tuple[dict[str, Any], int]] = []
            for sub in conn.execute(query).all():
                if sub.status not in _CHARGEABLE:
                    stopped.append(sub.id)
                    settled += 1
                    continue
                if sub.cancel_at_period_end and sub.status in ("active", "trialing"):
                    self._end_period(conn, sub, now)
                    settled += 1
                    continue
                attempt = int(sub.attempts) + 1
                claim = {
                    "merchant_id": merchant_id,
                    "subscription_id": sub.id,
                    "cycle_number": int(sub.cycle_number) + 1,
                    "transaction_id": renewal_transaction_id(sub.id, attempt),
                    "kind": _kind(sub),
                    "state": "processing",
                    "amount_minor": sub.amount_minor,
                    "due_at": sub.next_charge_at,
                }
                wanted.append((claim, attempt))
            if stopped:
                conn.execute(sa.update(_S).where(_S.c.id.in_(stopped)).values(next_charge_at=None))
            if not wanted:
                return settled, []
            # Inserted in one executemany, then their ids read by the unique
            # (merchant, transactionId): RETURNING in a given order makes SQLite's
            # dialect insert the rows one by one.
            conn.execute(sa.insert(_C), [claim for claim, _ in wanted])
            made = conn.execute(
                sa.select(_C.c.transaction_id, _C.c.id).where(
                    _C.c.merchant_id == merchant_id,
                    _C.c.transaction_id.in_([claim["transaction_id"] for claim, _ in wanted]),
                )
            )
            ids = {str(transaction_id): int(claim_id) for transaction_id, claim_id in made}
            claimed = [ids[claim["transaction_id"]] for claim, _ in wanted]
            conn.execute(
                _POINT_AT_CLAIM,
                [
                    {
                        "b_id": row["subscription_id"],
                        "v_claim": claim_id,
                        "v_attempts": attempt,
                    }
                    for (row, attempt), claim_id in zip(wanted, claimed, strict=True)
                ],
            )
        return settled, claimed

    @staticmethod
    def _end_period(conn: sa.Connection, sub: Row, now: datetime) -> None:
        ended = require(SUBSCRIPTION, sub.status, "period_end_cancel").target
        conn.execute(
            sa.update(_S)
            .where(_S.c.id == sub.id)
            .values(status=ended, next_charge_at=None, trial_notice_at=None, ended_at=now)
        )
        row = conn.execute(sa.select(_S).where(_S.c.id == sub.id)).one()
        emit(conn, row, "subscription.cancelled", now, reason="period_end")

    def charge_claims(self, merchant_id: str, claim_ids: list[int], now: datetime) -> None:
        """Step 2: charge each ``processing`` claim's card under its transactionId.

        One transaction for the lot: their subscriptions locked, the payments and their
        events written together, the claims ``charged`` in one executemany.
        """
        with self.db.write() as conn:
            for pairs in _locked_claims(conn, claim_ids, "processing"):
                to_charge: list[tuple[Row, Row]] = []
                for sub, claim in pairs:
                    # Checked again on the locked row: a cancel or pause acknowledged
                    # since the claim has committed, so the card is not charged (a
                    # cancel waits for this lock).
                    if not self._abandon_if_stopped(conn, sub, claim, now):
                        to_charge.append((sub, claim))
                if not to_charge:
                    continue
                made = _charge_many(
                    conn, [(sub, claim.transaction_id) for sub, claim in to_charge], now
                )
                conn.execute(
                    _MARK_CHARGED,
                    [
                        {
                            "b_id": claim.id,
                            "v_payment": made[claim.transaction_id][0],
                            "v_status": made[claim.transaction_id][1],
                            "v_at": now,
                        }
                        for _, claim in to_charge
                    ],
                )

    def _abandon_if_stopped(self, conn: sa.Connection, sub: Row, claim: Row, now: datetime) -> bool:
        """Abandon ``claim`` uncharged when its subscription no longer wants the charge.

        The claim's checks are made again on the locked row: a subscription cancelled,
        paused or expired since is left alone; one whose cancel at period end was
        scheduled since ends its period instead. The claim becomes ``abandoned`` (no
        payment, so it is not among the subscription's charges).
        """
        stopped = sub.status not in _CHARGEABLE
        ends = sub.cancel_at_period_end and sub.status in ("active", "trialing")
        if not stopped and not ends:
            return False
        if ends:
            self._end_period(conn, sub, now)
        conn.execute(
            sa.update(_S).where(_S.c.id == sub.id, _S.c.claim_id == claim.id).values(claim_id=None)
        )
        conn.execute(sa.update(_C).where(_C.c.id == claim.id).values(state="abandoned"))
        return True

    def finish_claims(self, merchant_id: str, claim_ids: list[int], now: datetime) -> int:
        """Step 3: apply each charged claim's outcome to its subscription.

        The claims are read again under their subscriptions' row locks: a cancel, pause
        or other action that took a lock first has applied its claim already
        (`outcome.finish_pending`), and it is not applied twice.
        """
        done = 0
        with self.db.write() as conn:
            for pairs in _locked_claims(conn, claim_ids, "charged"):
                webhooks = store_webhooks(conn, {sub.store_id for sub, _ in pairs})
                finish_many(conn, pairs, now, webhooks)
                done += len(pairs)
        return done


#: A claimed subscription points at its claim (executemany).
_POINT_AT_CLAIM = (
    sa.update(_S)
    .where(_S.c.id == sa.bindparam("b_id"))
    .values(claim_id=sa.bindparam("v_claim"), attempts=sa.bindparam("v_attempts"))
)
#: A claim whose card was charged (executemany).
_MARK_CHARGED = (
    sa.update(_C)
    .where(_C.c.id == sa.bindparam("b_id"))
    .values(
        state="charged",
        payment_id=sa.bindparam("v_payment"),
        payment_status=sa.bindparam("v_status"),
        charged_at=sa.bindparam("v_at"),
    )
)


def _locked_claims(
    conn: sa.Connection, claim_ids: Sequence[int], state: str
) -> Iterator[list[tuple[Row, Row]]]:
    """``claim_ids`` still in ``state``, oldest first, each with its subscription locked.

    The subscriptions are locked in one ``SELECT … ORDER BY id FOR UPDATE`` (always in
    the same order, so two passes never deadlock), and the claims read again once the
    locks are held: an action that took a lock first (a cancel, a pause,
    `outcome.finish_pending`) or another pass may have moved one on, and such a claim is
    skipped. Yields lists in which each subscription appears once; a second claim of the
    same subscription (none is made while one is open, but a list may hold both) comes
    in a later list, read again after the caller has handled the first.
    """
    remaining = list(claim_ids)
    while remaining:
        found = conn.execute(
            sa.select(_C.c.id, _C.c.subscription_id)
            .where(_C.c.id.in_(remaining), _C.c.state == state)
            .order_by(_C.c.id)
        ).all()
        round_: dict[str, int] = {}
        later: list[int] = []
        for claim_id, subscription_id in found:
            if subscription_id in round_:
                later.append(int(claim_id))
            else:
                round_[str(subscription_id)] = int(claim_id)
        if not round_:
            return
        subs = {
            str(sub.id): sub
            for sub in conn.execute(
                sa.select(_S).where(_S.c.id.in_(list(round_))).order_by(_S.c.id).with_for_update()
            )
        }
        claims = {
            int(claim.id): claim
            for claim in conn.execute(
                sa.select(_C).where(_C.c.id.in_(list(round_.values())), _C.c.state == state)
            )
        }
        pairs = [
            (subs[subscription_id], claims[claim_id])
            for subscription_id, claim_id in sorted(round_.items(), key=lambda item: item[1])
            if claim_id in claims
        ]
        if pairs:
            yield pairs
        remaining = later
