"""Identifier generation in the spec's shapes."""

from __future__ import annotations

import secrets
import uuid

from workbench.spec import IdPrefix

__all__ = ["new_id", "new_uuid"]


def new_id(prefix: IdPrefix) -> str:
    """A fresh identifier such as ``pay_3f9c...`` (24 hex characters after the prefix)."""
    return f"{prefix.value}{secrets.token_hex(12)}"


def new_uuid() -> str:
    """A fresh UUID v4 string (checkout sessions, request ids, correlation ids)."""
    return str(uuid.uuid4())
