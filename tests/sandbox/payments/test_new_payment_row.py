"""A new payment's row is built by one function, its status checked against the state
table (`transitions.require`), for the card charge, the TR QR payment and a renewal."""

from __future__ import annotations

import subprocess
import sys
from datetime import UTC, datetime
from typing import Any

import pytest

from workbench.sandbox.errors import ServiceError
from workbench.sandbox.payments.service import commission_for, new_payment

NOW = datetime(2027, 1, 31, 10, 0, tzinfo=UTC)
CARD = {
    "card_token": "tok_test_success",
    "behaviour": "success",
    "card_mask": "411111******1111",
    "card_brand": "visa",
    "card_type": "credit",
    "bin": "411111",
}


def _row(to: str, **extra: Any) -> dict[str, Any]:
    return new_payment(
        merchant_id="m_1",
        store_id="st_1",
        transaction_id="txn_1",
        fingerprint="f",
        amount=10_000,
        currency="TRY",
        card=CARD,
        to=to,
        now=NOW,
        **extra,
    )


def test_a_captured_payment_has_its_money_code_and_completion() -> None:
    row = _row("captured", installment_count=3)
    assert row["status"] == "captured"
    assert row["commission"] == commission_for(10_000, 3)
    assert row["net_amount"] == 10_000 - row["commission"]
    assert row["auth_code"] is not None
    assert len(row["auth_code"]) == 6
    assert row["completed_at"] == NOW
    assert row["correlation_id"] is None


@pytest.mark.parametrize("to", ["authorized", "declined", "pending_3ds"])
def test_a_payment_that_moved_no_money_shows_none(to: str) -> None:
    row = _row(to)
    assert (row["commission"], row["net_amount"]) == (0, 0)
    assert (row["auth_code"] is not None) == (to == "authorized")
    assert (row["completed_at"] is not None) == (to == "authorized")
    assert (row["correlation_id"] is not None) == (to == "pending_3ds")


@pytest.mark.parametrize("to", ["voided", "failed", "refunded"])
def test_a_status_no_charge_leads_to_is_refused(to: str) -> None:
    with pytest.raises(ServiceError) as refused:
        _row(to)
    assert refused.value.code == "SVC-PAY-4090"


def test_the_state_checks_hold_under_python_O() -> None:
    """``assert`` vanishes under ``-O``; the table's check (`require`) does not."""
    code = (
        "from datetime import UTC, datetime\n"
        "from workbench.sandbox.errors import ServiceError\n"
        "from workbench.sandbox.payments.service import new_payment\n"
        "try:\n"
        "    new_payment(merchant_id='m', store_id='s', transaction_id='t', fingerprint='f',\n"
        "        amount=100, currency='TRY', card={}, to='voided', now=datetime.now(UTC))\n"
        "except ServiceError as e:\n"
        "    print(e.code)\n"
    )
    out = subprocess.run(
        [sys.executable, "-O", "-c", code], capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "SVC-PAY-4090"
