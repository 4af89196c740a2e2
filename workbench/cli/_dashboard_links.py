"""Links into the local sandbox's dashboard (``/dashboard``) for what a command printed.

The dashboard is the sandbox's own (`workbench.sandbox.dashboard`): a link asks the
reader to sign in first (``workbench sandbox`` prints a one-time link), then opens the
page. Only the command line uses these; the client never prints them.
"""

from __future__ import annotations

import re

from workbench.spec.ids import IdPrefix

__all__ = ["dashboard_link"]

_PAGES = {
    IdPrefix.PAYMENT: "payments",
    IdPrefix.REFUND: "refunds",
    IdPrefix.SUBSCRIPTION: "subscriptions",
    IdPrefix.EVENT: "events",
}
#: A checkout session's id: a UUID.
_SESSION = re.compile(
    r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$"
)


def dashboard_link(base_url: str, object_id: str) -> str | None:
    """The dashboard page of a payment, refund, subscription, session or event (``None``
    for an id of another kind)."""
    base = base_url.rstrip("/")
    for prefix, page in _PAGES.items():
        if object_id.startswith(prefix):
            return f"{base}/dashboard/{page}/{object_id}"
    if _SESSION.match(object_id):
        return f"{base}/dashboard/sessions/{object_id}"
    return None
