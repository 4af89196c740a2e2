"""The spec's vocabulary as data, written once: errors, states, operations, limits, ids, cards.

Both halves read it: the sandbox enforces it, the client dispatches on it and
the guide's tables and diagrams are generated from it.
"""

from workbench.spec import limits
from workbench.spec.cards import CARD_NUMBER, is_card_number, looks_like_card_number, luhn_ok
from workbench.spec.errors import ERRORS, ErrorCode, error_code
from workbench.spec.ids import UUID4_PATTERN, IdPrefix, is_uuid4
from workbench.spec.operations import OPERATIONS, Operation
from workbench.spec.states import PAYMENT, REFUND, SESSION, SUBSCRIPTION, StateMachine, Transition

__all__ = [
    "CARD_NUMBER",
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
    "is_card_number",
    "is_uuid4",
    "limits",
    "looks_like_card_number",
    "luhn_ok",
]
