"""Identifier prefixes of the service's resources."""

from __future__ import annotations

from enum import StrEnum

__all__ = ["IdPrefix"]


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
