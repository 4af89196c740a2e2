"""The state machines of payments, refunds, checkout sessions and subscriptions, as data.

Rows marked ``origin="spec"`` are the spec's transition tables; rows marked
``origin="sandbox"`` fill its "not shown" gaps with the sandbox's documented
decisions. The sandbox enforces these tables, the client's ``allowed_actions``
reads them and the guide's diagrams are generated from them.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "PAYMENT",
    "REFUND",
    "SESSION",
    "SUBSCRIPTION",
    "StateMachine",
    "Transition",
]


@dataclass(frozen=True, slots=True)
class Transition:
    """One row of a transition table.

    Attributes:
        source: the state before, or ``None`` for a newly created object.
        action: the short name of the trigger (``capture``, ``renew`` ...).
        trigger: the request or background event that fires it.
        condition: when this row applies, in words.
        target: the state after.
        effects: other effects, in words.
        idempotent: the row is a repeat of an action already done (a no-op replay).
        automatic: fired by the reconciler, not by a caller.
        origin: ``spec`` or ``sandbox`` (a documented decision).
    """

    source: str | None
    action: str
    trigger: str
    condition: str
    target: str
    effects: str = ""
    idempotent: bool = False
    automatic: bool = False
    origin: str = "spec"


@dataclass(frozen=True, slots=True)
class StateMachine:
    """A named set of states and the transitions between them."""

    name: str
    states: tuple[str, ...]
    terminal: frozenset[str]
    transitions: tuple[Transition, ...]

    def targets(self, source: str | None, action: str) -> set[str]:
        """States ``action`` can lead to from ``source``."""
        return {t.target for t in self.transitions if t.source == source and t.action == action}

    def allows(self, source: str | None, action: str) -> bool:
        """Whether ``action`` is permitted on an object in state ``source``."""
        return any(t.source == source and t.action == action for t in self.transitions)

    def actions(self, source: str, *, include_idempotent: bool = False) -> list[str]:
        """Caller actions permitted from ``source``, in table order, without duplicates.

        Reconciler transitions are left out; so are idempotent replays unless asked for.
        """
        seen: list[str] = []
        for t in self.transitions:
            if t.source != source or t.automatic:
                continue
            if t.idempotent and not include_idempotent:
                continue
            if t.action not in seen:
                seen.append(t.action)
        return seen

    def mermaid(self) -> str:
        """The machine as a Mermaid ``stateDiagram-v2``, one edge per (source, target, action)."""
        lines = ["stateDiagram-v2"]
        edges: list[tuple[str, str, str]] = []
        for t in self.transitions:
            src = "[*]" if t.source is None else t.source
            label = t.action + (" (auto)" if t.automatic else "")
            edge = (src, t.target, label)
            if edge not in edges:
                edges.append(edge)
        for src, dst, label in edges:
            lines.append(f"    {src} --> {dst}: {label}")
        for state in sorted(self.terminal):
            lines.append(f"    {state} --> [*]")
        return "\n".join(lines)


_CHARGE = "POST /v1/payments/card"
_3DS = "POST /v1/payments/{id}/3ds-callback"
_CAPTURE = "POST /v1/payments/{id}/capture"
_VOID = "POST /v1/payments/{id}/void"
_REFUND = "POST /v1/payments/{id}/refund"

PAYMENT = StateMachine(
    name="payment",
    states=("pending_3ds", "authorized", "captured", "voided", "declined", "failed"),
    terminal=frozenset({"voided", "declined", "failed"}),
    transitions=(
        Transition(
            None,
            "charge",
            _CHARGE,
            "capture true (default) and charge succeeds",
            "captured",
            "commission and netAmount set",
        ),
        Transition(
            None, "charge", _CHARGE, "capture=false", "authorized", "no ledger entries posted"
        ),
        Transition(
            None,
            "charge",
            _CHARGE,
            "3-D Secure challenge required",
            "pending_3ds",
            "correlationId and ACS address returned",
            origin="sandbox",
        ),
        Transition(
            None,
            "charge",
            _CHARGE,
            "issuer declines or funds insufficient",
            "declined",
            "400 in the error envelope (SVC-PAY-3001 / 3002)",
            origin="sandbox",
        ),
        Transition(
            "pending_3ds",
            "3ds_callback",
            _3DS,
            "challenge completes",
            "captured",
            "as in the shown response",
        ),
        Transition(
            "pending_3ds",
            "3ds_callback",
            _3DS,
            "challenge completes, capture=false",
            "authorized",
            origin="sandbox",
        ),
        Transition(
            "pending_3ds", "3ds_callback", _3DS, "challenge failed", "failed", origin="sandbox"
        ),
        Transition(
            "pending_3ds",
            "expire",
            "reconciler",
            "challenge not completed in time",
            "failed",
            automatic=True,
            origin="sandbox",
        ),
        Transition(
            "captured",
            "3ds_callback",
            _3DS,
            "duplicate submit",
            "captured",
            "returns the first result unchanged",
            idempotent=True,
        ),
        Transition(
            "authorized",
            "3ds_callback",
            _3DS,
            "duplicate submit",
            "authorized",
            "returns the first result unchanged",
            idempotent=True,
            origin="sandbox",
        ),
        Transition(
            "failed",
            "3ds_callback",
            _3DS,
            "duplicate submit",
            "failed",
            "returns the first result unchanged",
            idempotent=True,
            origin="sandbox",
        ),
        Transition(
            "authorized",
            "capture",
            _CAPTURE,
            "full amount only",
            "captured",
            "refundableAmount equals amount",
        ),
        Transition(
            "captured",
            "capture",
            _CAPTURE,
            "repeat call",
            "captured",
            "idempotent",
            idempotent=True,
        ),
        Transition(
            "authorized",
            "void",
            _VOID,
            "",
            "voided",
            "no ledger entries; reason surfaced on the payment.voided event",
        ),
        Transition("voided", "void", _VOID, "repeat call", "voided", "idempotent", idempotent=True),
        Transition(
            "captured",
            "refund",
            _REFUND,
            "amount <= refundableAmount",
            "captured",
            "refundAmount grows, refundableAmount shrinks; 200 if settled synchronously",
        ),
        Transition(
            "captured",
            "refund",
            _REFUND,
            "refund still in flight",
            "captured",
            "202 returned; completed later by the reconciler; reuse the same Idempotency-Key",
        ),
    ),
)

REFUND = StateMachine(
    name="refund",
    states=("pending", "completed"),
    terminal=frozenset({"completed"}),
    transitions=(
        Transition(None, "refund", _REFUND, "settled synchronously", "completed", "200"),
        Transition(None, "refund", _REFUND, "in flight", "pending", "202", origin="sandbox"),
        Transition(
            "pending",
            "settle",
            "reconciler",
            "bank confirms",
            "completed",
            "refund.settled event",
            automatic=True,
            origin="sandbox",
        ),
    ),
)

SESSION = StateMachine(
    name="session",
    states=("active", "completed", "expired"),
    terminal=frozenset({"completed", "expired"}),
    transitions=(
        Transition(None, "create", "POST /v1/payments/sessions", "", "active"),
        Transition(
            "active",
            "complete",
            "hosted checkout page",
            "buyer pays or updates card",
            "completed",
            "session.completed event",
            origin="sandbox",
        ),
        Transition(
            "active",
            "expire",
            "reconciler",
            "expiresAt passed",
            "expired",
            "session.expired event",
            automatic=True,
            origin="sandbox",
        ),
    ),
)

_SUB = "/v1/subscriptions"
_PUB = "/v1/public/subscriptions/{hash}"

SUBSCRIPTION = StateMachine(
    name="subscription",
    states=("trialing", "active", "past_due", "paused", "charging", "cancelled", "expired"),
    terminal=frozenset({"cancelled", "expired"}),
    transitions=(
        Transition(
            None,
            "create",
            f"POST {_SUB}",
            "no trialEndAt",
            "active",
            "cycleNumber 0; nextChargeAt set",
        ),
        Transition(
            None,
            "create",
            f"POST {_SUB}",
            "trialEndAt given",
            "trialing",
            "trial runs until that date",
        ),
        Transition(
            "active",
            "pause",
            f"POST {_SUB}/{{id}}/pause",
            "",
            "paused",
            "the reconciler ignores paused subscriptions",
        ),
        Transition(
            "trialing",
            "pause",
            f"POST {_SUB}/{{id}}/pause",
            "",
            "paused",
            "the reconciler ignores paused subscriptions",
        ),
        Transition(
            "paused",
            "resume",
            f"POST {_SUB}/{{id}}/resume",
            "",
            "active",
            "the next reconciler tick attempts an immediate charge",
        ),
        Transition(
            "past_due",
            "retry",
            f"POST {_SUB}/{{id}}/retry",
            "",
            "past_due",
            "nextChargeAt set to now so the reconciler retries on its next tick",
        ),
        Transition(
            "active",
            "charge_now",
            f"POST {_SUB}/{{id}}/charge-now",
            "charge allowed",
            "charging",
            "queueing receipt; poll until status leaves charging",
        ),
        Transition(
            "trialing",
            "charge_now",
            f"POST {_SUB}/{{id}}/charge-now",
            "charge allowed",
            "charging",
            "ends the trial",
            origin="sandbox",
        ),
        Transition(
            "past_due",
            "charge_now",
            f"POST {_SUB}/{{id}}/charge-now",
            "charge allowed",
            "charging",
            origin="sandbox",
        ),
        Transition(
            "charging",
            "charge_succeeded",
            "reconciler",
            "charge approved",
            "active",
            "cycleNumber + 1; charge item recorded",
            automatic=True,
            origin="sandbox",
        ),
        Transition(
            "charging",
            "charge_failed",
            "reconciler",
            "charge declined",
            "past_due",
            "retry schedule starts",
            automatic=True,
            origin="sandbox",
        ),
        Transition(
            "charging",
            "charge_failed",
            "reconciler",
            "charge declined after the last scheduled retry (it was past_due)",
            "expired",
            automatic=True,
            origin="sandbox",
        ),
        Transition(
            "active",
            "cancel",
            f"POST {_SUB}/{{id}}/cancel",
            "atPeriodEnd=true",
            "active",
            "cancelAtPeriodEnd becomes true",
        ),
        Transition(
            "active",
            "cancel",
            f"POST {_SUB}/{{id}}/cancel",
            "atPeriodEnd=false",
            "cancelled",
            "cancels immediately (resulting status is our decision)",
        ),
        Transition(
            "trialing",
            "cancel",
            f"POST {_SUB}/{{id}}/cancel",
            "atPeriodEnd=true",
            "trialing",
            "cancelAtPeriodEnd true; cancelled when the trial ends",
            origin="sandbox",
        ),
        Transition(
            "trialing",
            "cancel",
            f"POST {_SUB}/{{id}}/cancel",
            "atPeriodEnd=false",
            "cancelled",
            origin="sandbox",
        ),
        Transition(
            "past_due",
            "cancel",
            f"POST {_SUB}/{{id}}/cancel",
            "either atPeriodEnd",
            "cancelled",
            "no paid period to wait for",
            origin="sandbox",
        ),
        Transition(
            "paused",
            "cancel",
            f"POST {_SUB}/{{id}}/cancel",
            "either atPeriodEnd",
            "cancelled",
            "no running period to wait for",
            origin="sandbox",
        ),
        Transition(
            "active",
            "public_cancel",
            f"POST {_PUB}/cancel",
            "atPeriodEnd default true",
            "active",
            "cancelAtPeriodEnd true",
        ),
        Transition(
            "active",
            "public_cancel",
            f"POST {_PUB}/cancel",
            "atPeriodEnd=false",
            "cancelled",
            origin="sandbox",
        ),
        Transition(
            "trialing",
            "public_cancel",
            f"POST {_PUB}/cancel",
            "atPeriodEnd default true",
            "trialing",
            "cancelAtPeriodEnd true; cancelled when the trial ends",
            origin="sandbox",
        ),
        Transition(
            "trialing",
            "public_cancel",
            f"POST {_PUB}/cancel",
            "atPeriodEnd=false",
            "cancelled",
            origin="sandbox",
        ),
        Transition(
            "past_due",
            "public_cancel",
            f"POST {_PUB}/cancel",
            "either atPeriodEnd",
            "cancelled",
            "no paid period to wait for",
            origin="sandbox",
        ),
        Transition(
            "paused",
            "public_cancel",
            f"POST {_PUB}/cancel",
            "either atPeriodEnd",
            "cancelled",
            "no running period to wait for",
            origin="sandbox",
        ),
        Transition(
            "active",
            "renew",
            "reconciler",
            "nextChargeAt reached, charge approved",
            "active",
            "cycleNumber + 1; subscription.renewed",
            automatic=True,
            origin="sandbox",
        ),
        Transition(
            "active",
            "renewal_failed",
            "reconciler",
            "nextChargeAt reached, charge declined",
            "past_due",
            "retry schedule starts",
            automatic=True,
            origin="sandbox",
        ),
        Transition(
            "active",
            "period_end_cancel",
            "reconciler",
            "nextChargeAt reached with cancelAtPeriodEnd",
            "cancelled",
            automatic=True,
            origin="sandbox",
        ),
        Transition(
            "trialing",
            "trial_end",
            "reconciler",
            "trialEndAt reached, charge approved",
            "active",
            "cycleNumber 1",
            automatic=True,
            origin="sandbox",
        ),
        Transition(
            "trialing",
            "trial_end_failed",
            "reconciler",
            "trialEndAt reached, charge declined",
            "past_due",
            automatic=True,
            origin="sandbox",
        ),
        Transition(
            "trialing",
            "period_end_cancel",
            "reconciler",
            "trialEndAt reached with cancelAtPeriodEnd",
            "cancelled",
            automatic=True,
            origin="sandbox",
        ),
        Transition(
            "past_due",
            "retry_succeeded",
            "reconciler",
            "retry charge approved",
            "active",
            "cycleNumber + 1",
            automatic=True,
            origin="sandbox",
        ),
        Transition(
            "past_due",
            "retry_failed",
            "reconciler",
            "retry charge declined, attempts left",
            "past_due",
            "next retry scheduled",
            automatic=True,
            origin="sandbox",
        ),
        Transition(
            "past_due",
            "retries_exhausted",
            "reconciler",
            "last scheduled retry declined",
            "expired",
            automatic=True,
            origin="sandbox",
        ),
    ),
)
