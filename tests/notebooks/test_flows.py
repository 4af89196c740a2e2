"""The flows against a live sandbox: the outcomes the notebooks teach, for several inputs."""

from __future__ import annotations

import json

import pytest

from workbench import flows
from workbench._client import Client
from workbench.config import DEFAULT_SECRET_KEY
from workbench.flows._run import redact
from workbench.spec import PAYMENT


def test_quickstart_signs_and_shows_both_signature_errors(client: Client) -> None:
    run = flows.quickstart(client, amount=10_000)
    assert run.outcome["status"] == "captured"
    timestamp, method, path, digest = run.outcome["canonical_lines"]
    assert timestamp.endswith("Z")
    assert (method, path) == ("POST", "/v1/payments/card")
    assert len(digest) == 64
    assert run.outcome["tampered_code"] == "SVC-GW-1002"
    assert run.outcome["skewed_code"] == "SVC-GW-1001"
    assert run.outcome["recomputed_matches"] is True
    assert len(run.outcome["signature_prefix"]) == 8
    assert [c.status for c in run.calls] == [201, 401, 401]


@pytest.mark.parametrize(
    ("card", "status", "challenged"),
    [
        ("tok_test_3ds_challenge", "captured", True),
        ("tok_test_3ds_fail", "failed", True),
        ("tok_test_success", "captured", False),
    ],
)
def test_card_3ds_outcomes(client: Client, card: str, status: str, challenged: bool) -> None:
    run = flows.card_3ds(client, amount=15_000, card_token=card)
    assert run.outcome["status"] == status
    assert run.outcome["challenged"] is challenged
    if challenged:
        assert run.outcome["duplicate_same"] is True
        assert run.states()[0] == "pending_3ds"
    assert run.outcome["refundable_amount"] == (15_000 if status == "captured" else 0)


def test_card_3ds_wrong_code_fails_the_challenge(client: Client) -> None:
    run = flows.card_3ds(client, challenge_code="000000")
    assert run.outcome["status"] == "failed"
    assert any("SVC-PAY-3003" in line for line in run.lines)


def test_card_3ds_authorize_only_after_challenge(client: Client) -> None:
    run = flows.card_3ds(client, capture=False, installments=3)
    assert run.outcome["status"] == "authorized"
    assert run.outcome["installments"] == 3
    assert run.states() == ["pending_3ds", "authorized"]


def test_card_3ds_decline_is_reported_not_raised(client: Client) -> None:
    run = flows.card_3ds(client, card_token="tok_test_insufficient_funds")
    assert run.outcome == {"status": "declined", "challenged": False, "error": "SVC-PAY-3002"}
    assert run.calls[0].error_code == "SVC-PAY-3002"


def test_preauth_capture_twice(client: Client) -> None:
    run = flows.preauth(client, amount=30_000)
    assert run.states() == ["authorized", "captured"]
    assert run.outcome["refundable_amount"] == 30_000
    assert run.outcome["repeat_same"] is True


def test_preauth_void_carries_the_reason_on_the_event(client: Client) -> None:
    run = flows.preauth(client, then="void", reason="out of stock")
    assert run.states() == ["authorized", "voided"]
    assert run.outcome["voided_events"] == 1
    assert run.outcome["event_reason"] == "out of stock"
    assert run.outcome["refundable_amount"] == 0


def test_preauth_rejects_an_unknown_next_step(client: Client) -> None:
    with pytest.raises(ValueError, match="capture"):
        flows.preauth(client, then="refund")  # type: ignore[arg-type]


@pytest.mark.parametrize(("card", "later"), [("tok_test_success", 0), ("tok_test_refund_async", 2)])
def test_refunds_partial_over_and_rest(client: Client, card: str, later: int) -> None:
    run = flows.refunds(client, amount=20_000, partial=7_500, card_token=card)
    assert run.outcome["after_partial"] == 12_500
    assert run.outcome["over_refund_error"] == "SVC-PAY-4002"
    assert run.outcome["refund_amount"] == 20_000
    assert run.outcome["refundable_amount"] == 0
    assert run.outcome.get("settled_later", 0) == later
    statuses = [c.status for c in run.calls if c.path.endswith("/refund")]
    assert (202 in statuses) is (later > 0)


def test_idempotency_and_errors(client: Client) -> None:
    run = flows.idempotency_errors(client)
    assert run.outcome["replay_same_payment"] is True
    assert run.outcome["replayed"] is True
    assert run.outcome["replay_same_request_id"] is True
    assert run.outcome["conflict_code"] == "SVC-GW-2001"
    assert run.outcome["fence_same_payment"] is True
    assert run.outcome["validation_code"] == "SVC-VAL-4001"
    assert run.outcome["envelope_keys"] == ["code", "message", "requestId"]
    assert run.outcome["retries"] == 1


def test_summary_is_the_same_on_every_run(client: Client) -> None:
    first = flows.preauth(client).summary()
    second = flows.preauth(client).summary()
    assert first == second
    assert "pay_" not in first


def test_recorded_bodies_hold_no_secret(client: Client) -> None:
    runs = [flows.card_3ds(client), flows.quickstart(client), flows.idempotency_errors(client)]
    for run in runs:
        text = json.dumps([(c.request, c.response) for c in run.calls]) + run.summary()
        assert DEFAULT_SECRET_KEY not in text
        for call in run.calls:
            if isinstance(call.request, dict) and "pares" in call.request:
                assert call.request["pares"].endswith("…")
                assert len(call.request["pares"]) == 5


def test_frame_and_state_path(client: Client) -> None:
    run = flows.preauth(client)
    frame = run.frame()
    assert list(frame["status"]) == [201, 200, 200, 200]
    assert frame.loc[0, "state"] == "(new) → authorized"
    assert frame.loc[1, "state"] == "authorized → captured"
    assert frame.loc[2, "state"] == "captured"
    assert frame.loc[1, "request"] == "POST /v1/payments/{id}/capture"
    path = run.state_path()
    assert str(path) == "(new) --charge--> authorized --capture--> captured"
    svg = path.svg()
    assert svg.startswith("<svg")
    assert svg.count("<rect") == 2
    assert ">authorized<" in svg
    assert ">captured<" in svg


def test_catalogue_defaults_run(client: Client) -> None:
    # idempotency_errors waits a second on its 429 step; the subscription, portal and
    # checkout flows have their own tests in test_part2_flows.py.
    for name, spec in flows.FLOWS.items():
        if name in ("idempotency_errors", "subscriptions", "portal", "checkout"):
            continue
        run = spec(client)
        assert run.calls, name
        assert run.name == name


def test_transitions_table_reads_the_spec() -> None:
    table = flows.transitions(PAYMENT)
    assert list(table.columns) == ["from", "action", "to", "condition", "by"]
    from_authorized = set(table[table["from"] == "authorized"]["action"])
    # the merchant's two actions, and the sandbox's expiry of an authorization
    assert from_authorized == {"capture", "void", "expire"}
    with_repeats = flows.transitions(PAYMENT, include_idempotent=True)
    assert len(with_repeats) > len(table)


def test_bearer_path_segment_is_cut() -> None:
    from workbench.flows._run import _BEARER_PATH

    path = "/v1/public/subscriptions/Dr9K27CZMknd2dB9enE5/cancel"
    assert _BEARER_PATH.sub(r"\1…", path) == "/v1/public/subscriptions/Dr9K…/cancel"


def test_redact_masks_bearer_and_secret_fields() -> None:
    body = {"pares": "eyJhbGciOi", "nested": [{"webhookSecret": "whsec_123456"}], "amount": 5}
    assert redact(body) == {"pares": "eyJh…", "nested": [{"webhookSecret": "whse…"}], "amount": 5}


def test_unrecorded_calls_stay_out_of_the_run(client: Client) -> None:
    run = flows.FlowRun("probe", {})
    with run.recording(client):
        charge = client.payments.charge_card(
            transaction_id=flows.new_transaction_id(), amount=1_000, card_token="tok_test_success"
        )
        with run.unrecorded(client):
            client.payments.retrieve(charge.payment_id)
            client.payments.retrieve(charge.payment_id)
        client.payments.retrieve(charge.payment_id)
    assert [c.method for c in run.calls] == ["POST", "GET"]
    assert len(run.tracker.records) == 2
    assert list(run.frame()["step"]) == [1, 2]


def test_call_log_shows_the_merchant_calls_and_leaves_control_calls_out(client: Client) -> None:
    calls = flows.CallLog(client)
    try:
        client.sandbox.fixtures()
        auth = client.payments.charge_card(
            transaction_id=flows.new_transaction_id(), amount=2_000, card_token="tok_test_success",
            capture=False,
        )  # fmt: skip
        client.sandbox.tick()
        other = client.payments.charge_card(
            transaction_id=flows.new_transaction_id(), amount=1_000, card_token="tok_test_success"
        )
        client.payments.capture(auth.payment_id)
    finally:
        calls.close()
    client.payments.retrieve(other.payment_id)
    table = calls.table()
    assert len(calls) == 3
    assert list(table["request"]) == [
        "POST /v1/payments/card",
        "POST /v1/payments/card",
        "POST /v1/payments/{id}/capture",
    ]
    mine = calls.table(auth.payment_id)
    assert list(mine["step"]) == [1, 3]
    assert list(mine["state"]) == ["(new) → authorized", "authorized → captured"]
    assert calls.states(auth.payment_id) == ["authorized", "captured"]
    assert str(calls.path(auth.payment_id)) == "(new) --charge--> authorized --capture--> captured"
    assert calls.exchange(3).startswith(f"→ POST /v1/payments/{auth.payment_id}/capture")
