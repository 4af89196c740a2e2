"""Request bodies for the sandbox's routes: a fresh transaction id, a valid card charge."""

from __future__ import annotations

import uuid
from typing import Any

__all__ = ["charge_body", "txn"]


def txn() -> str:
    """A fresh merchant transaction id."""
    return f"txn_{uuid.uuid4().hex}"


def charge_body(
    token: str = "tok_test_success",  # noqa: S107 - a test card token
    amount: int = 10_000,
    **extra: Any,
) -> dict[str, Any]:
    """A valid card charge body."""
    return {
        "transactionId": txn(),
        "amount": amount,
        "currency": "TRY",
        "cardToken": token,
        **extra,
    }
