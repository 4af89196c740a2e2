"""The spec's vocabulary as data, written once: errors, state machines, operations, limits, ids.

Both halves read it: the sandbox enforces it, the client dispatches on it and
the guide's tables and diagrams are generated from it.
"""

from workbench.spec import limits
from workbench.spec.errors import ERRORS, ErrorCode, error_code
from workbench.spec.ids import UUID4_PATTERN, IdPrefix, is_uuid4
from workbench.spec.operations import OPERATIONS, Operation
from workbench.spec.states import PAYMENT, REFUND, SESSION, SUBSCRIPTION, StateMachine, Transition

__all__ = [
    "ERRORS",
    "OPERATIONS",
    "PAYMENT",
    "REFUND",
    "SESSION",
    "SUBSCRIPTION",
    "UUID4_PATTERN",
    "ErrorCode",
    "IdPrefix",
    "Operation",
    "StateMachine",
    "Transition",
    "error_code",
    "is_uuid4",
    "limits",
]
