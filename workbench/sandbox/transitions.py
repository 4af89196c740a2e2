"""`require`: the one gate every state change of the sandbox passes through.

The machines are `workbench.spec`'s tables; an action a machine does not allow from an
object's state is refused with the machine's conflict code (409) and the actions that
are allowed, so a caller can see what to do instead.
"""

from __future__ import annotations

from workbench.sandbox.errors import ServiceError
from workbench.spec.states import StateMachine

__all__ = ["require"]


def require(machine: StateMachine, state: str, action: str, *, repeats: bool = True) -> None:
    """Refuse ``action`` on a ``machine`` object in ``state`` unless its table allows it.

    Args:
        machine: the state machine (``workbench.spec.PAYMENT`` ...).
        state: the object's current state.
        action: the action's short name in the table (``capture``, ``charge_now`` ...).
        repeats: whether the table's ``repeat`` rows count; a caller that answers repeats
            on its own (by replaying the first answer) passes ``False``.

    Raises:
        ServiceError: the machine's ``conflict_code`` (409), naming the allowed actions.
    """
    if any(
        t.source == state and t.action == action and (repeats or not t.idempotent)
        for t in machine.transitions
    ):
        return
    allowed = ", ".join(a.replace("_", "-") for a in machine.actions(state)) or "none"
    raise ServiceError(
        machine.conflict_code,
        f"{machine.name} is {state}; {action.replace('_', '-')} is not allowed "
        f"(allowed: {allowed})",
    )
