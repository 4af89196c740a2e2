"""Normalisation, comparison and redaction on hand-made exchanges (no sandbox needed)."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from workbench.parity import REDACTED, Exchange, FlowRecord, Redactor, Stop, compare_flow
from workbench.parity._normalise import Normaliser

PAY_1, PAY_2 = "pay_01a20c94cb272200e32bf218", "pay_01a20c94cb6d3b2adff2e0e2"
REQ_1, REQ_2 = "a0a6dfb4-36c9-4e1c-b377-d81b12f415d4", "f90c0170-3714-4eb2-ab68-86b27d824aad"


def _flow(*exchanges: Exchange, stopped: Stop | None = None) -> FlowRecord:
    return FlowRecord(name="f", params={}, exchanges=exchanges, stopped=stopped)


def _ex(path: str = "/v1/payments/card", status: int = 201, **fields: Any) -> Exchange:
    return Exchange(method="POST", path=path, status=status, **fields)


def _kinds(a: FlowRecord, b: FlowRecord) -> list[tuple[str, str]]:
    return [(d.kind, d.field) for d in compare_flow(a, b).differences]


def test_the_same_id_twice_is_one_placeholder_and_identity_is_compared() -> None:
    norm = Normaliser()
    first = norm.json({"paymentId": PAY_1, "checkAt": f"/v1/payments/{PAY_1}"})
    assert str(first["paymentId"]) == "<pay:1>"
    assert str(first["checkAt"]) == "/v1/payments/<pay:1>"
    assert str(norm.text(PAY_2)) == "<pay:2>"
    # A reads the payment it created; B reads another one: an identity difference
    a = _flow(_ex(response={"paymentId": PAY_1}), _ex(f"/v1/payments/{PAY_1}", 200))
    b = _flow(_ex(response={"paymentId": PAY_1}), _ex(f"/v1/payments/{PAY_2}", 200))
    assert _kinds(a, b) == [("identity", "path")]
    assert _kinds(a, a) == []


def test_a_replay_must_carry_the_original_request_id() -> None:
    replayed = {"request_id": REQ_1, "replayed": "true"}
    a = _flow(_ex(request_id=REQ_1), _ex(**replayed))
    b = _flow(_ex(request_id=REQ_1), _ex(request_id=REQ_2, replayed="true"))
    assert _kinds(a, b) == [("identity", "header X-Request-Id")]
    c = _flow(_ex(request_id=REQ_1), _ex(request_id=REQ_1))
    assert _kinds(a, c) == [("header", "header Idempotent-Replayed")]


def test_types_timestamps_states_codes_and_money_are_exact() -> None:
    a = _flow(
        _ex(response={"amount": 100, "status": "captured", "createdAt": "2026-01-02T03:04:05Z"}),
        _ex(status=400, response={"code": "SVC-PAY-4002", "message": "too much"}),
    )
    b = _flow(
        _ex(response={"amount": "100", "status": "authorized",
                      "createdAt": "2026-01-02T03:04:05+00:00"}),
        _ex(status=409, response={"code": "SVC-PAY-4090", "message": "other wording"}),
    )  # fmt: skip
    assert _kinds(a, b) == [
        ("type", "amount"),
        ("state", "status"),
        ("value", "createdAt"),
        ("HTTP status", "HTTP status"),
        ("error code", "code"),
    ]
    money = _flow(_ex(response={"refundableAmount": 101, "installmentCount": 2}))
    base = _flow(_ex(response={"refundableAmount": 100, "installmentCount": 1}))
    assert _kinds(base, money) == [("money", "refundableAmount"), ("value", "installmentCount")]


def test_a_renamed_field_is_one_difference_a_removed_one_is_two_sides() -> None:
    a = _flow(_ex(response={"checkAt": "/x", "bin": "424242"}))
    renamed = _flow(_ex(response={"pollAt": "/x", "bin": "424242"}))
    assert _kinds(a, renamed) == [("field name", "checkAt")]
    changed = _flow(_ex(response={"pollAt": "/y", "cardBin": "999999"}))
    assert sorted(_kinds(a, changed)) == [
        ("field only in A", "bin"),
        ("field only in A", "checkAt"),
        ("field only in B", "cardBin"),
        ("field only in B", "pollAt"),
    ]


def test_a_dropped_list_item_and_an_extra_step_do_not_shift_the_rest() -> None:
    events = [{"type": t, "data": {"amount": 1}} for t in ("a.created", "a.done", "a.closed")]
    a = _flow(_ex(response={"items": events}), _ex("/v1/x"), _ex("/v1/y"))
    b = _flow(_ex(response={"items": [events[0], events[2]]}), _ex("/v1/y"))
    result = compare_flow(a, b)
    assert [(d.kind, d.field) for d in result.differences] == [
        ("item only in A", "items[1]"),
        ("step only in A", "step"),
    ]
    assert [s.outcome for s in result.steps] == ["differs", "only in A", "same"]


def test_a_retried_attempt_is_one_step_only_and_later_request_ids_keep_their_identity() -> None:
    def envelope(request_id: str) -> Exchange:
        body = {"code": "SVC-GW-1002", "message": "no", "requestId": request_id}
        return _ex(status=401, request_id=request_id, response=body)

    ids = [str(uuid.UUID(int=n, version=4)) for n in range(1, 6)]
    a = _flow(_ex(request_id=ids[0]), envelope(ids[1]))
    throttled = _ex(status=429, request_id=ids[2], retry_after="1", response=None)
    b = _flow(throttled, _ex(request_id=ids[3]), envelope(ids[4]))
    result = compare_flow(a, b)
    assert [(d.kind, d.step) for d in result.differences] == [("step only in B", "—/1")]
    assert [s.outcome for s in result.steps] == ["only in B", "same", "same"]
    assert result.steps[0].request.endswith("(an attempt the client retried)")
    # on both sides, the retried attempts are paired and compared like any step
    both = _flow(throttled, *a.exchanges)
    assert _kinds(both, b) == []


def test_a_control_routes_answer_is_compared_by_shape_only() -> None:
    a = _flow(_ex("/sandbox/reconciler/tick", 200, control=True,
                  response={"processed": {"webhooks": 2}}))  # fmt: skip
    b = _flow(_ex("/sandbox/reconciler/tick", 200, control=True,
                  response={"processed": {"webhooks": 0}}))  # fmt: skip
    assert _kinds(a, b) == []
    c = _flow(_ex("/sandbox/reconciler/tick", 200, control=True, response={"processed": "2"}))
    assert _kinds(a, c) == [("type", "processed")]


def test_a_flow_that_raised_on_one_side_is_a_difference_and_its_tail_is_skipped() -> None:
    a = _flow(_ex(), _ex("/v1/z"))
    b = _flow(_ex(), stopped=Stop(kind="error", step=2, reason="APIError: SVC-GW-4004"))
    result = compare_flow(a, b)
    assert [(d.kind, d.b) for d in result.differences] == [
        ("stopped", "stopped at step 2: APIError: SVC-GW-4004")
    ]
    assert [s.outcome for s in result.steps] == ["same", "skipped"]
    assert "B's flow stopped with an error" in result.steps[1].reason


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        ("card 4242 4242 4242 4242 typed", False),
        ("4000000000003220", False),
        ("order 1234567890123", True),  # 13 digits failing the card checksum
        ("sig " + "ab" * 32, False),
        ("key sk_test_wb_demo_secret_0001 leaked", False),
        ("whsec_test_wb_demo_0001", False),
        ("pay_01a20c94cb272200e32bf218", True),
    ],
)
def test_redaction_of_text(text: str, kept: bool) -> None:
    assert (Redactor().text(text) == text) is kept


#: A request id whose last group is twelve decimal digits passing the Luhn check, as about
#: one UUID in 2,800 is: the recorder redacted it as a card number now and then.
REQ_LUHN = "9cfb5e4f-24aa-42b2-a53b-210028374861"


def test_a_uuid_is_kept_whole_though_its_last_group_passes_the_card_checksum() -> None:
    redactor = Redactor()
    assert redactor.text(REQ_LUHN) == REQ_LUHN
    assert redactor.json({"requestId": REQ_LUHN}) == {"requestId": REQ_LUHN}
    assert redactor.path(f"/checkout/{REQ_LUHN}") == f"/checkout/{REQ_LUHN}"
    # a card number after a dash that is not a UUID's is still cut
    assert redactor.text("order-4242424242424242") == f"order-{REDACTED}"
    assert redactor.text(f"{REQ_LUHN[:24]}4242424242424242") == f"{REQ_LUHN[:24]}{REDACTED}"


def test_an_error_envelope_whose_request_id_passes_the_card_checksum_matches_its_header() -> None:
    def envelope(request_id: str) -> Exchange:
        body = {"code": "SVC-GW-1002", "message": "no", "requestId": request_id}
        return _ex(status=401, request_id=request_id, response=Redactor().json(body))

    a = _flow(_ex(request_id=REQ_1), envelope(REQ_2))
    assert _kinds(a, _flow(_ex(request_id=REQ_2), envelope(REQ_LUHN))) == []
    # an envelope quoting another request's id than its header's is still a difference
    body = {"code": "SVC-GW-1002", "message": "no", "requestId": REQ_1}
    quoting = _ex(status=401, request_id=REQ_LUHN, response=body)
    assert _kinds(a, _flow(_ex(request_id=REQ_1), quoting)) == [("identity", "requestId")]


def test_redaction_of_fields_paths_and_the_key_in_use() -> None:
    redactor = Redactor(["my-own-secret-value"])
    body = {"stores": [{"webhookSecret": "whatever", "webhookUrl": None}],
            "pares": "eyJ.x", "publicHash": None, "note": "my-own-secret-value"}  # fmt: skip
    assert redactor.json(body) == {
        "stores": [{"webhookSecret": REDACTED, "webhookUrl": None}],
        "pares": REDACTED,
        "publicHash": None,
        "note": REDACTED,
    }
    assert redactor.json(4242424242424242) == REDACTED
    assert redactor.path("/v1/public/subscriptions/q1myNx/cancel") == (
        f"/v1/public/subscriptions/{REDACTED}/cancel"
    )


def test_a_turkish_transaction_id_keeps_its_identity() -> None:
    norm = Normaliser()
    request = norm.json({"transactionId": "ord-ş-1", "amount": 25_050})
    event = norm.json({"data": {"transactionId": "ord-ş-1"}})
    other = norm.json({"transactionId": "ord-s-1"})  # not the same id without the cedilla
    assert str(request["transactionId"]) == str(event["data"]["transactionId"])
    assert str(other["transactionId"]) != str(request["transactionId"])
    a = _flow(_ex(request={"transactionId": "sipariş-1"}, response={"paymentId": PAY_1}))
    b = _flow(_ex(request={"transactionId": "sipariş-2"}, response={"paymentId": PAY_1}))
    assert _kinds(a, b) == []
