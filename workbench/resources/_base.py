"""What every resource namespace shares: its client, and checks made before sending."""

from __future__ import annotations

from datetime import datetime
from typing import Any
from urllib.parse import quote

from workbench._base_client import AsyncAPIClient, SyncAPIClient
from workbench.signing import format_timestamp
from workbench.spec import IdPrefix, looks_like_card_number

__all__ = ["AsyncResource", "SyncResource", "compact", "kurus", "segment", "timestamp", "token"]


class SyncResource:
    """A namespace of endpoints on a `Client`."""

    def __init__(self, client: SyncAPIClient) -> None:
        self._client = client


class AsyncResource:
    """A namespace of endpoints on an `AsyncClient`."""

    def __init__(self, client: AsyncAPIClient) -> None:
        self._client = client


def compact(**fields: Any) -> dict[str, Any]:
    """A JSON body from keyword arguments, leaving out those that are ``None``."""
    return {k: v for k, v in fields.items() if v is not None}


def segment(value: str, name: str = "id") -> str:
    """A path parameter, percent-encoded so that it stays one segment.

    Raises:
        ValueError: for an empty value.
    """
    if not isinstance(value, str) or not value:
        raise ValueError(f"{name} must be a non-empty string")
    return quote(value, safe="")


def kurus(value: Any, name: str = "amount") -> int:
    """Check an amount is integer kuruş (never a float, never a bool).

    Raises:
        TypeError: for anything but an ``int``.
    """
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(
            f"{name} must be an integer number of kuruş, not {type(value).__name__}; "
            "use workbench.money.to_kurus() to convert lira"
        )
    return value


def token(value: str) -> str:
    """Check a card token is a vault token, refusing anything that looks like a card number.

    The number itself is never echoed back in the error.

    Raises:
        ValueError: for a raw card number or a value without the ``tok_`` prefix.
    """
    if isinstance(value, str) and looks_like_card_number(value):
        raise ValueError(
            "card_token looks like a raw card number; raw card data is never sent: "
            "tokenize the card first and pass its tok_ token"
        )
    if not isinstance(value, str) or not value.startswith(IdPrefix.CARD_TOKEN):
        raise ValueError("card_token must be a vault token starting with 'tok_'")
    return value


def timestamp(value: datetime | str | None) -> str | None:
    """An aware datetime as the service's ``Z`` timestamp; strings pass as given."""
    if value is None or isinstance(value, str):
        return value
    return format_timestamp(value)
