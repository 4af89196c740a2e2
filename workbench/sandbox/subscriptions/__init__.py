"""Subscriptions: tables, the state machine's actions, the reconciler's renewals, the portal.

`service` holds what callers do, `renewals.RenewalWork` what the reconciler does,
`outcome` what a made charge does to its subscription (applied once, by whichever takes
the row lock first), `schedule` the interval arithmetic, `cursor` the list's opaque
cursors, `views` the JSON shapes, `models` the request and response bodies, `tables` the
two tables and `routes` the HTTP routes (the merchant's and the buyer portal's). The hosted
``card_update_only`` page calls `replace_card` when the buyer is done.
"""

from workbench.sandbox.subscriptions.renewals import RETRY_OFFSETS, RenewalWork, charge_saved_card
from workbench.sandbox.subscriptions.schedule import INTERVAL_UNITS, add_months, after
from workbench.sandbox.subscriptions.service import TRIAL_NOTICE, ListFilters, replace_card
from workbench.sandbox.subscriptions.tables import subscription_charges, subscriptions

__all__ = [
    "INTERVAL_UNITS",
    "RETRY_OFFSETS",
    "TRIAL_NOTICE",
    "ListFilters",
    "RenewalWork",
    "add_months",
    "after",
    "charge_saved_card",
    "replace_card",
    "subscription_charges",
    "subscriptions",
]
