"""The state machines of payments, refunds, checkout sessions and subscriptions, as data.

Each machine is written as the spec writes it: a Markdown table, one transition per line,
with two columns the spec does not have: *Action* (the short name the sandbox and the
client use) and *Kind*, a comma-separated list of

- ``sandbox``: the row fills a "not shown" gap of the spec with the sandbox's documented
  decision (the other rows are the spec's own);
- ``repeat``: the row is a repeat of an action already done (an idempotent no-op);
- ``auto``: the reconciler fires it, not a caller.

The sandbox enforces these tables (``workbench.sandbox.transitions.require``), the
client's ``allowed_actions`` reads them and the guide's diagrams are generated from them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

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
    #: The error code for an action this machine does not allow from an object's state.
    conflict_code: str = field(default="", compare=False)

    @classmethod
    def from_table(
        cls,
        *,
        name: str,
        states: tuple[str, ...],
        terminal: frozenset[str],
        conflict_code: str,
        table: str,
    ) -> StateMachine:
        """Build a machine from its Markdown transition table (see the module docstring).

        Raises:
            ValueError: a row that has not seven cells, an unknown *Kind* word, or a
                state that is not one of ``states``.
        """
        lines = [line.strip() for line in table.strip().splitlines()]
        if len(lines) < 3 or _cells(lines[0]) != list(_COLUMNS):
            raise ValueError(f"{name}: the table must start with the header {_COLUMNS}")
        transitions = tuple(_transition(name, states, line) for line in lines[2:])
        return cls(name, states, terminal, transitions, conflict_code)

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


_COLUMNS = ("From", "Action", "Trigger", "Condition", "To", "Other effects", "Kind")
_KINDS = frozenset({"sandbox", "repeat", "auto"})


def _cells(line: str) -> list[str]:
    if not (line.startswith("|") and line.endswith("|")):
        raise ValueError(f"not a table row: {line!r}")
    return [cell.strip() for cell in line[1:-1].split("|")]


def _transition(machine: str, states: tuple[str, ...], line: str) -> Transition:
    cells = _cells(line)
    if len(cells) != len(_COLUMNS):
        raise ValueError(f"{machine}: {len(cells)} cells, not {len(_COLUMNS)}, in {line!r}")
    source, action, trigger, condition, target, effects, kind = cells
    kinds = {word.strip() for word in kind.split(",") if word.strip()}
    if kinds - _KINDS:
        raise ValueError(f"{machine}: unknown kind {sorted(kinds - _KINDS)} in {line!r}")
    for state in (source, target):
        if state != "(new)" and state not in states:
            raise ValueError(f"{machine}: unknown state {state!r} in {line!r}")
    return Transition(
        source=None if source == "(new)" else source,
        action=action,
        trigger=trigger,
        condition=condition,
        target=target,
        effects=effects,
        idempotent="repeat" in kinds,
        automatic="auto" in kinds,
        origin="sandbox" if "sandbox" in kinds else "spec",
    )


PAYMENT = StateMachine.from_table(
    name="payment",
    states=("pending_3ds", "authorized", "captured", "voided", "declined", "failed"),
    terminal=frozenset({"voided", "declined", "failed"}),
    conflict_code="SVC-PAY-4090",
    table="""
| From        | Action       | Trigger                             | Condition                                  | To          | Other effects                                                                   | Kind            |
|-------------|--------------|-------------------------------------|--------------------------------------------|-------------|---------------------------------------------------------------------------------|-----------------|
| (new)       | charge       | POST /v1/payments/card              | capture true (default) and charge succeeds | captured    | commission and netAmount set                                                    |                 |
| (new)       | charge       | POST /v1/payments/card              | capture=false                              | authorized  | no ledger entries posted                                                        |                 |
| (new)       | charge       | POST /v1/payments/card              | 3-D Secure challenge required              | pending_3ds | correlationId and ACS address returned                                          | sandbox         |
| (new)       | charge       | POST /v1/payments/card              | issuer declines or funds insufficient      | declined    | 400 in the error envelope (SVC-PAY-3001 / 3002)                                 | sandbox         |
| pending_3ds | 3ds_callback | POST /v1/payments/{id}/3ds-callback | challenge completes                        | captured    | as in the shown response                                                        |                 |
| pending_3ds | 3ds_callback | POST /v1/payments/{id}/3ds-callback | challenge completes, capture=false         | authorized  |                                                                                 | sandbox         |
| pending_3ds | 3ds_callback | POST /v1/payments/{id}/3ds-callback | challenge failed                           | failed      |                                                                                 | sandbox         |
| pending_3ds | expire       | reconciler                          | challenge not completed in time            | failed      |                                                                                 | sandbox, auto   |
| captured    | 3ds_callback | POST /v1/payments/{id}/3ds-callback | duplicate submit                           | captured    | returns the first result unchanged                                              | repeat          |
| authorized  | 3ds_callback | POST /v1/payments/{id}/3ds-callback | duplicate submit                           | authorized  | returns the first result unchanged                                              | sandbox, repeat |
| failed      | 3ds_callback | POST /v1/payments/{id}/3ds-callback | duplicate submit                           | failed      | returns the first result unchanged                                              | sandbox, repeat |
| authorized  | capture      | POST /v1/payments/{id}/capture      | full amount only                           | captured    | refundableAmount equals amount                                                  |                 |
| captured    | capture      | POST /v1/payments/{id}/capture      | repeat call                                | captured    | idempotent                                                                      | repeat          |
| authorized  | void         | POST /v1/payments/{id}/void         |                                            | voided      | no ledger entries; reason surfaced on the payment.voided event                  |                 |
| voided      | void         | POST /v1/payments/{id}/void         | repeat call                                | voided      | idempotent                                                                      | repeat          |
| authorized  | expire       | reconciler, or a capture or void    | authorization lifetime passed (7 days)     | voided      | payment.voided naming the expiry; a capture then answers 409                    | sandbox, auto   |
| captured    | refund       | POST /v1/payments/{id}/refund       | amount <= refundableAmount                 | captured    | refundAmount grows, refundableAmount shrinks; 200 if settled synchronously      |                 |
| captured    | refund       | POST /v1/payments/{id}/refund       | refund still in flight                     | captured    | 202 returned; completed later by the reconciler; reuse the same Idempotency-Key |                 |
""",
)

REFUND = StateMachine.from_table(
    name="refund",
    states=("pending", "completed"),
    terminal=frozenset({"completed"}),
    conflict_code="SVC-PAY-4090",
    table="""
| From    | Action | Trigger                       | Condition             | To        | Other effects        | Kind          |
|---------|--------|-------------------------------|-----------------------|-----------|----------------------|---------------|
| (new)   | refund | POST /v1/payments/{id}/refund | settled synchronously | completed | 200                  |               |
| (new)   | refund | POST /v1/payments/{id}/refund | in flight             | pending   | 202                  | sandbox       |
| pending | settle | reconciler                    | bank confirms         | completed | refund.settled event | sandbox, auto |
""",
)

SESSION = StateMachine.from_table(
    name="session",
    states=("active", "completed", "expired"),
    terminal=frozenset({"completed", "expired"}),
    conflict_code="SVC-SES-4090",
    table="""
| From   | Action   | Trigger                    | Condition                  | To        | Other effects           | Kind          |
|--------|----------|----------------------------|----------------------------|-----------|-------------------------|---------------|
| (new)  | create   | POST /v1/payments/sessions |                            | active    |                         |               |
| active | complete | hosted checkout page       | buyer pays or updates card | completed | session.completed event | sandbox       |
| active | expire   | reconciler                 | expiresAt passed           | expired   | session.expired event   | sandbox, auto |
""",
)

SUBSCRIPTION = StateMachine.from_table(
    name="subscription",
    states=("trialing", "active", "past_due", "paused", "charging", "cancelled", "expired"),
    terminal=frozenset({"cancelled", "expired"}),
    conflict_code="SVC-SUB-4090",
    table="""
| From     | Action            | Trigger                                     | Condition                                                        | To        | Other effects                                                      | Kind          |
|----------|-------------------|---------------------------------------------|------------------------------------------------------------------|-----------|--------------------------------------------------------------------|---------------|
| (new)    | create            | POST /v1/subscriptions                      | no trialEndAt                                                    | active    | cycleNumber 0; nextChargeAt set                                    |               |
| (new)    | create            | POST /v1/subscriptions                      | trialEndAt given                                                 | trialing  | trial runs until that date                                         |               |
| active   | pause             | POST /v1/subscriptions/{id}/pause           |                                                                  | paused    | the reconciler ignores paused subscriptions                        |               |
| trialing | pause             | POST /v1/subscriptions/{id}/pause           |                                                                  | paused    | the reconciler ignores paused subscriptions                        |               |
| paused   | resume            | POST /v1/subscriptions/{id}/resume          |                                                                  | active    | the next reconciler tick attempts an immediate charge              |               |
| paused   | resume            | POST /v1/subscriptions/{id}/resume          | cancelAtPeriodEnd true                                           | active    | no charge; cancelled when the paid period ends                     | sandbox       |
| past_due | retry             | POST /v1/subscriptions/{id}/retry           |                                                                  | past_due  | nextChargeAt set to now so the reconciler retries on its next tick |               |
| active   | charge_now        | POST /v1/subscriptions/{id}/charge-now      | charge allowed                                                   | charging  | queueing receipt; poll until status leaves charging                |               |
| trialing | charge_now        | POST /v1/subscriptions/{id}/charge-now      | charge allowed                                                   | charging  | ends the trial                                                     | sandbox       |
| past_due | charge_now        | POST /v1/subscriptions/{id}/charge-now      | charge allowed                                                   | charging  |                                                                    | sandbox       |
| charging | charge_succeeded  | reconciler                                  | charge approved                                                  | active    | cycleNumber + 1; charge item recorded                              | sandbox, auto |
| charging | charge_failed     | reconciler                                  | charge declined                                                  | past_due  | retry schedule starts                                              | sandbox, auto |
| charging | charge_failed     | reconciler                                  | charge declined after the last scheduled retry (it was past_due) | expired   |                                                                    | sandbox, auto |
| active   | cancel            | POST /v1/subscriptions/{id}/cancel          | atPeriodEnd=true                                                 | active    | cancelAtPeriodEnd becomes true                                     |               |
| active   | cancel            | POST /v1/subscriptions/{id}/cancel          | atPeriodEnd=false                                                | cancelled | cancels immediately (resulting status is our decision)             |               |
| trialing | cancel            | POST /v1/subscriptions/{id}/cancel          | atPeriodEnd=true                                                 | trialing  | cancelAtPeriodEnd true; cancelled when the trial ends              | sandbox       |
| trialing | cancel            | POST /v1/subscriptions/{id}/cancel          | atPeriodEnd=false                                                | cancelled |                                                                    | sandbox       |
| past_due | cancel            | POST /v1/subscriptions/{id}/cancel          | either atPeriodEnd                                               | cancelled | no paid period to wait for                                         | sandbox       |
| paused   | cancel            | POST /v1/subscriptions/{id}/cancel          | either atPeriodEnd                                               | cancelled | no running period to wait for                                      | sandbox       |
| active   | public_cancel     | POST /v1/public/subscriptions/{hash}/cancel | atPeriodEnd default true                                         | active    | cancelAtPeriodEnd true                                             |               |
| active   | public_cancel     | POST /v1/public/subscriptions/{hash}/cancel | atPeriodEnd=false                                                | cancelled |                                                                    | sandbox       |
| trialing | public_cancel     | POST /v1/public/subscriptions/{hash}/cancel | atPeriodEnd default true                                         | trialing  | cancelAtPeriodEnd true; cancelled when the trial ends              | sandbox       |
| trialing | public_cancel     | POST /v1/public/subscriptions/{hash}/cancel | atPeriodEnd=false                                                | cancelled |                                                                    | sandbox       |
| past_due | public_cancel     | POST /v1/public/subscriptions/{hash}/cancel | either atPeriodEnd                                               | cancelled | no paid period to wait for                                         | sandbox       |
| paused   | public_cancel     | POST /v1/public/subscriptions/{hash}/cancel | either atPeriodEnd                                               | cancelled | no running period to wait for                                      | sandbox       |
| active   | renew             | reconciler                                  | nextChargeAt reached, charge approved                            | active    | cycleNumber + 1; subscription.renewed                              | sandbox, auto |
| active   | renewal_failed    | reconciler                                  | nextChargeAt reached, charge declined                            | past_due  | retry schedule starts                                              | sandbox, auto |
| active   | period_end_cancel | reconciler                                  | nextChargeAt reached with cancelAtPeriodEnd                      | cancelled |                                                                    | sandbox, auto |
| trialing | trial_end         | reconciler                                  | trialEndAt reached, charge approved                              | active    | cycleNumber 1                                                      | sandbox, auto |
| trialing | trial_end_failed  | reconciler                                  | trialEndAt reached, charge declined                              | past_due  |                                                                    | sandbox, auto |
| trialing | period_end_cancel | reconciler                                  | trialEndAt reached with cancelAtPeriodEnd                        | cancelled |                                                                    | sandbox, auto |
| past_due | retry_succeeded   | reconciler                                  | retry charge approved                                            | active    | cycleNumber + 1                                                    | sandbox, auto |
| past_due | retry_failed      | reconciler                                  | retry charge declined, attempts left                             | past_due  | next retry scheduled                                               | sandbox, auto |
| past_due | retries_exhausted | reconciler                                  | last scheduled retry declined                                    | expired   |                                                                    | sandbox, auto |
""",
)
