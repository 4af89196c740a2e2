"""What the notebooks use besides the client: rendering, the buyer's side, the forms' flows.

The notebooks' cells make the service calls themselves. This package holds what
is not the lesson:

- rendering: `CallLog` (each cell's calls folded under it as they went over the wire,
  the merchant's calls as a table, an object's states as a diagram), `Exchanges`
  (calls shown as request and response), `transitions` (a state machine as a table),
  `qr_fields` (a TR QR payload as a table), `show_page` (a hosted page inline);
- the buyer's side of the hosted pages, played without a browser (`buyer`):
  `pay_by_card`, `pay_by_qr`, `qr_payload`, and `card_number_for` (fixtures lookup);
- the flow functions behind each notebook's "Try it" form (`FLOWS`): each makes
  the same calls as the notebook with the form's inputs and returns a `FlowRun`.
"""

from workbench.flows._calllog import CallLog
from workbench.flows._catalogue import FLOWS, FlowSpec, Param
from workbench.flows._diagram import StatePath, transitions
from workbench.flows._http import Exchanges
from workbench.flows._run import Call, FlowRun, new_transaction_id
from workbench.flows.buyer import (
    DEMO_RETURN_PATH,
    Landing,
    card_number_for,
    open_page,
    pay_by_card,
    pay_by_qr,
    qr_payload,
)
from workbench.flows.card_3ds import card_3ds
from workbench.flows.checkout import checkout, qr_fields, return_url, show_page
from workbench.flows.idempotency_errors import idempotency_errors
from workbench.flows.portal import portal
from workbench.flows.preauth import preauth
from workbench.flows.refunds import refunds
from workbench.flows.signing import quickstart
from workbench.flows.subscriptions import subscriptions

__all__ = [
    "DEMO_RETURN_PATH",
    "FLOWS",
    "Call",
    "CallLog",
    "Exchanges",
    "FlowRun",
    "FlowSpec",
    "Landing",
    "Param",
    "StatePath",
    "card_3ds",
    "card_number_for",
    "checkout",
    "idempotency_errors",
    "new_transaction_id",
    "open_page",
    "pay_by_card",
    "pay_by_qr",
    "portal",
    "preauth",
    "qr_fields",
    "qr_payload",
    "quickstart",
    "refunds",
    "return_url",
    "show_page",
    "subscriptions",
    "transitions",
]
