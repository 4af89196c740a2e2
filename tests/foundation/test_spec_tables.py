"""The spec's vocabulary is self-consistent."""

from __future__ import annotations

import re

import pytest

from workbench.spec import ERRORS, PAYMENT, REFUND, SESSION, SUBSCRIPTION, StateMachine

MACHINES = [PAYMENT, REFUND, SESSION, SUBSCRIPTION]


@pytest.mark.parametrize("machine", MACHINES, ids=lambda m: m.name)
def test_every_transition_uses_declared_states(machine: StateMachine) -> None:
    for t in machine.transitions:
        assert t.source is None or t.source in machine.states, t
        assert t.target in machine.states, t
    assert machine.terminal <= set(machine.states)


@pytest.mark.parametrize("machine", MACHINES, ids=lambda m: m.name)
def test_terminal_states_have_only_idempotent_exits(machine: StateMachine) -> None:
    for t in machine.transitions:
        if t.source in machine.terminal:
            assert t.idempotent, t
            assert t.target == t.source, t


def test_spec_named_payment_rows_are_present() -> None:
    assert PAYMENT.targets("authorized", "capture") == {"captured"}
    assert PAYMENT.targets("authorized", "void") == {"voided"}
    assert PAYMENT.allows("captured", "refund")
    assert not PAYMENT.allows("voided", "capture")
    assert not PAYMENT.allows("captured", "void")
    assert not PAYMENT.allows("authorized", "refund")
    assert PAYMENT.actions("authorized") == ["capture", "void"]


def test_spec_named_subscription_rows_are_present() -> None:
    assert SUBSCRIPTION.targets("paused", "resume") == {"active"}
    assert SUBSCRIPTION.targets("past_due", "retry") == {"past_due"}
    assert SUBSCRIPTION.targets("active", "charge_now") == {"charging"}
    assert SUBSCRIPTION.targets(None, "create") == {"active", "trialing"}
    assert not SUBSCRIPTION.allows("active", "resume")
    assert not SUBSCRIPTION.allows("cancelled", "pause")


def test_mermaid_mentions_every_state() -> None:
    for machine in MACHINES:
        diagram = machine.mermaid()
        assert diagram.startswith("stateDiagram-v2")
        for state in machine.states:
            assert state in diagram


def test_error_codes_are_unique_well_formed_and_spec_codes_match() -> None:
    assert len(ERRORS) == len({e.code for e in ERRORS.values()})
    for code, err in ERRORS.items():
        assert re.fullmatch(r"SVC-[A-Z]+-\d{4}", code)
        assert 400 <= err.http_status <= 599
    assert ERRORS["SVC-GW-2001"].http_status == 409
    assert {c for c, e in ERRORS.items() if e.origin == "spec"} == {
        "SVC-GW-1001",
        "SVC-GW-1002",
        "SVC-GW-1003",
        "SVC-GW-2001",
    }
    assert not ERRORS["SVC-GW-2001"].retryable
    assert ERRORS["SVC-GW-2002"].retryable


_HEADER = (
    "| From | Action | Trigger | Condition | To | Other effects | Kind |\n"
    "|---|---|---|---|---|---|---|\n"
)


def _machine(rows: str) -> StateMachine:
    return StateMachine.from_table(
        name="thing",
        states=("open", "shut"),
        terminal=frozenset({"shut"}),
        conflict_code="SVC-PAY-4090",
        table=_HEADER + rows,
    )


def test_a_table_row_reads_as_one_transition() -> None:
    machine = _machine("| open | close | POST /x | always | shut | gone | sandbox, auto |\n")
    (row,) = machine.transitions
    assert (row.source, row.action, row.target, row.origin) == ("open", "close", "shut", "sandbox")
    assert row.automatic
    assert not row.idempotent
    assert _machine("| (new) | make | POST /x |  | open |  |  |\n").transitions[0].source is None


@pytest.mark.parametrize(
    ("row", "complaint"),
    [
        ("| open | close | POST /x | shut | gone | |\n", "6 cells"),
        ("| open | close | POST /x | | ajar | | |\n", "unknown state 'ajar'"),
        ("| open | close | POST /x | | shut | | sometimes |\n", "unknown kind"),
        ("open | close | POST /x | | shut | | |\n", "not a table row"),
    ],
)
def test_a_malformed_table_row_is_refused_at_import(row: str, complaint: str) -> None:
    with pytest.raises(ValueError, match=complaint):
        _machine(row)
