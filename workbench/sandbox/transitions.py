"""`require`: the one gate every state change of the sandbox passes through.

The machines are `workbench.spec`'s tables; an action a machine does not allow from an
object's state is refused with the machine's conflict code (409) and the actions that
are allowed, so a caller can see what to do instead. What is allowed comes back as the
table's row: its ``target`` is the state to write, and an ``idempotent`` row (a repeat
of an action already done) changes nothing.
"""

from __future__ import annotations

from workbench.sandbox.errors import ServiceError
from workbench.spec.states import StateMachine, Transition

__all__ = ["require"]


def require(
    machine: StateMachine,
    state: str | None,
    action: str,
    *,
    to: str | None = None,
    repeats: bool = True,
) -> Transition:
    """The row of ``machine``'s table that allows ``action`` on an object in ``state``.

    Args:
        machine: the state machine (``workbench.spec.PAYMENT`` ...).
        state: the object's current state (``None`` for an object being created).
        action: the action's short name in the table (``capture``, ``charge_now`` ...).
        to: the state the caller moves the object to, where the table has several
            outcomes for the action and the caller decides which (a charge's); the row
            must lead there.
        repeats: whether the table's ``repeat`` rows count; a caller that answers repeats
            on its own (by replaying the first answer) passes ``False``.

    Returns:
        The first such row, in table order.

    Raises:
        ServiceError: the machine's ``conflict_code`` (409), naming the allowed actions.
    """
    for t in machine.transitions:
        if (
            t.source == state
            and t.action == action
            and (repeats or not t.idempotent)
            and (to is None or t.target == to)
        ):
            return t
    allowed = ", ".join(a.replace("_", "-") for a in _actions(machine, state)) or "none"
    outcome = f" to {to}" if to is not None else ""
    raise ServiceError(
        machine.conflict_code,
        f"{machine.name} is {state or 'new'}; {action.replace('_', '-')}{outcome} is not "
        f"allowed (allowed: {allowed})",
    )


def _actions(machine: StateMachine, state: str | None) -> list[str]:
    if state is None:
        return list(dict.fromkeys(t.action for t in machine.transitions if t.source is None))
    return machine.actions(state)
