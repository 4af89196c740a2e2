"""Identifier prefixes of the service's resources, and the UUID v4 of two headers."""

from __future__ import annotations

import re
from enum import StrEnum

__all__ = ["UUID4_PATTERN", "IdPrefix", "is_uuid4"]

#: A UUID version 4 (RFC 9562) in its canonical 36-character text: hex digits in groups
#: 8-4-4-4-12 with hyphens, version digit ``4``, variant ``8``, ``9``, ``a`` or ``b``,
#: either case. The format of ``Idempotency-Key`` and ``X-Request-Id`` (the spec's
#: header table); no braces, ``urn:uuid:`` prefix or hyphen-less form.
UUID4_PATTERN = (
    r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-4[0-9a-fA-F]{3}-[89abAB][0-9a-fA-F]{3}-[0-9a-fA-F]{12}$"
)
_UUID4 = re.compile(UUID4_PATTERN)


def is_uuid4(text: str) -> bool:
    """Whether ``text`` is a UUID v4 in canonical form (see `UUID4_PATTERN`)."""
    return _UUID4.fullmatch(text) is not None


class IdPrefix(StrEnum):
    """The prefix each resource's identifier starts with (checkout sessions are UUIDs)."""

    PAYMENT = "pay_"
    REFUND = "rfn_"
    MERCHANT = "mrc_"
    STORE = "sto_"
    CUSTOMER = "cus_"
    SUBSCRIPTION = "sub_"
    CARD_TOKEN = "tok_"
    PUBLIC_KEY = "pk_"
    SECRET_KEY = "sk_"
    EVENT = "evt_"
