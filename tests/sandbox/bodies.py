"""Request bodies for the sandbox's routes: a fresh transaction id, a card charge, a session."""

from __future__ import annotations

import uuid
from typing import Any

__all__ = ["charge_body", "charge_under", "session_body", "txn"]


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


def charge_under(transaction_id: str, amount: int, **extra: Any) -> dict[str, Any]:
    """A card charge under ``transaction_id`` that is approved at once (no 3-D Secure)."""
    return charge_body(
        amount=amount, **{"transactionId": transaction_id, "threeDSecure": False, **extra}
    )


def session_body(transaction_id: str, amount: int, **extra: Any) -> dict[str, Any]:
    """A hosted-checkout session body (``POST /v1/payments/sessions``)."""
    return {
        "transactionId": transaction_id,
        "amount": amount,
        "currency": "TRY",
        "returnUrl": "https://shop.example/return",
        **extra,
    }
