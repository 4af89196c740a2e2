"""`require` refuses what a machine's table does not allow, with the machine's code."""

from __future__ import annotations

import pytest

from workbench.sandbox.errors import ServiceError
from workbench.sandbox.transitions import require
from workbench.spec import PAYMENT, SESSION, SUBSCRIPTION


def test_an_allowed_action_passes() -> None:
    require(PAYMENT, "authorized", "capture")
    require(SUBSCRIPTION, "past_due", "charge_now")


def test_a_refusal_names_the_machine_state_and_allowed_actions() -> None:
    with pytest.raises(ServiceError) as caught:
        require(SUBSCRIPTION, "paused", "charge_now")
    assert caught.value.code == "SVC-SUB-4090"
    assert caught.value.message == (
        "subscription is paused; charge-now is not allowed (allowed: resume, cancel, public-cancel)"
    )


def test_a_terminal_state_allows_nothing() -> None:
    with pytest.raises(ServiceError) as caught:
        require(SESSION, "completed", "complete")
    assert caught.value.code == "SVC-SES-4090"
    assert "(allowed: none)" in caught.value.message


def test_repeats_count_unless_the_caller_answers_them_itself() -> None:
    require(PAYMENT, "captured", "3ds_callback")
    with pytest.raises(ServiceError):
        require(PAYMENT, "captured", "3ds_callback", repeats=False)


def test_the_allowed_row_says_where_the_action_leads_and_whether_it_is_a_repeat() -> None:
    first = require(PAYMENT, "authorized", "capture")
    assert (first.target, first.idempotent) == ("captured", False)
    again = require(PAYMENT, "captured", "capture")
    assert (again.target, again.idempotent) == ("captured", True)
    assert require(PAYMENT, "authorized", "void").target == "voided"


def test_an_outcome_the_caller_chooses_must_be_one_of_the_tables() -> None:
    assert require(PAYMENT, None, "charge", to="pending_3ds").target == "pending_3ds"
    assert require(SESSION, None, "create", to="active").target == "active"
    with pytest.raises(ServiceError) as caught:
        require(PAYMENT, None, "charge", to="voided")
    assert caught.value.code == "SVC-PAY-4090"
    assert caught.value.message == (
        "payment is new; charge to voided is not allowed (allowed: charge)"
    )
