"""Where a portal card update sends the buyer back: their portal, its hash kept sealed.

A ``card_update_only`` session opened from the buyer portal returns the buyer to the
portal's address, whose last segment is the subscription's ``publicHash`` (the bearer
the subscriptions table keeps only as a SHA-256). The session row must not hold that
link, so its ``returnUrl`` holds the hash sealed instead (`workbench.sandbox.sealing`,
under the replay key the database does not hold, bound to the subscription):
``…/v1/public/subscriptions/sealed.sub_….<token>``. The hosted page opens it
(`open_return`) only when it sends the buyer on; with another key (a sandbox restarted
without its key file) it cannot, and the buyer gets no link back rather than a wrong one.
"""

from __future__ import annotations

import base64
import binascii
import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from workbench.sandbox.sealing import Sealer

__all__ = ["open_return", "sealed_return"]

_PORTAL = "/v1/public/subscriptions/"
_MARK = "sealed."
_SEALED = re.compile(rf"{re.escape(_PORTAL)}{re.escape(_MARK)}(sub_[0-9A-Za-z]+)\.([0-9A-Za-z_-]+)")


def _context(subscription_id: str) -> bytes:
    return f"workbench portal return\n{subscription_id}".encode()


def sealed_return(sealer: Sealer, portal_base: str, subscription_id: str, public_hash: str) -> str:
    """The portal's address with its ``publicHash`` sealed, for a session row to keep."""
    sealed = sealer.seal(public_hash.encode(), _context(subscription_id))
    token = base64.urlsafe_b64encode(sealed).decode("ascii").rstrip("=")
    return f"{portal_base.rstrip('/')}{_PORTAL}{_MARK}{subscription_id}.{token}"


def open_return(url: str, sealer: Sealer) -> str | None:
    """``url`` with a sealed portal hash opened; ``url`` itself if it holds none.

    Returns:
        The address to send the buyer to, or ``None`` when the hash was sealed under
        another key (or altered): no link back rather than a broken one.
    """
    found = _SEALED.search(url)
    if found is None:
        return url
    subscription_id, token = found.groups()
    try:
        sealed = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
    except (binascii.Error, ValueError):
        return None
    opened = sealer.open(sealed, _context(subscription_id))
    if opened is None:
        return None
    return url[: found.start()] + _PORTAL + opened.decode("ascii") + url[found.end() :]
