"""The flows of the notebooks: one function per flow, each returning a `FlowRun`.

Each takes a `workbench.Client` and plain parameters, makes real requests, and
returns what it did (calls, answers, the state history) with a short
deterministic `FlowRun.summary`. The notebooks, `workbench.widgets` and the
tests use them; `FLOWS` describes their parameters for the forms.
"""

from workbench.flows._catalogue import FLOWS, FlowSpec, Param
from workbench.flows._connect import connect
from workbench.flows._diagram import StatePath, transitions
from workbench.flows._run import Call, FlowRun, new_transaction_id
from workbench.flows.card_3ds import card_3ds
from workbench.flows.checkout import RETURN_URL, checkout, qr_fields, show_page
from workbench.flows.idempotency_errors import idempotency_errors
from workbench.flows.portal import portal
from workbench.flows.preauth import preauth
from workbench.flows.refunds import refunds
from workbench.flows.signing import quickstart
from workbench.flows.subscriptions import subscriptions

__all__ = [
    "FLOWS",
    "RETURN_URL",
    "Call",
    "FlowRun",
    "FlowSpec",
    "Param",
    "StatePath",
    "card_3ds",
    "checkout",
    "connect",
    "idempotency_errors",
    "new_transaction_id",
    "portal",
    "preauth",
    "qr_fields",
    "quickstart",
    "refunds",
    "show_page",
    "subscriptions",
    "transitions",
]
