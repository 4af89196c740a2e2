"""Identifier generation in the spec's shapes."""

from __future__ import annotations

import secrets
import time
import uuid

from workbench.spec import IdPrefix

__all__ = ["new_id", "new_uuid"]


def new_id(prefix: IdPrefix) -> str:
    """A fresh identifier such as ``pay_019ab3...`` (24 hex characters after the prefix).

    The first 12 are the creation time in milliseconds, the other 12 random: ids made
    one after another sort together, so the unique index on them takes each insert on
    the page the previous one touched rather than on a random page of its own (fewer
    pages written per commit).
    """
    return f"{prefix.value}{time.time_ns() // 1_000_000:012x}{secrets.token_hex(6)}"


def new_uuid() -> str:
    """A fresh UUID v4 string (checkout sessions, request ids, correlation ids)."""
    return str(uuid.uuid4())
