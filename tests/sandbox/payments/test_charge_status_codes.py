"""The card charge answers only with the status codes the spec lists.

The spec lists 200, 201, 400, 401, 404 and 429 for ``POST /v1/payments/card`` (and 409
for an idempotency conflict, from its idempotency section), and 200/202 for a refund.
A decline is therefore a 400 in the envelope (``SVC-PAY-3001``/``3002``), still
recorded and visible through ``GET /v1/payments/{id}``, still raised by the client as
`CardDeclinedError`; a failed 3-D Secure challenge (``SVC-PAY-3003``) is a 400 too.
Over real HTTP on SQLite and PostgreSQL.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable

import httpx2
import pytest

from tests.sandbox.bodies import charge_body
from tests.sandbox.envelope import assert_envelope
from workbench import _exceptions as errors
from workbench.config import DEFAULT_API_KEY
from workbench.sandbox import SandboxServer
from workbench.sandbox.cards import CHALLENGE_CODE
from workbench.spec import ERRORS
from workbench.testing import client_for

CHARGE = "/v1/payments/card"
#: The spec's list for the card charge, plus 409 from its idempotency section.
CHARGE_STATUSES = {200, 201, 400, 401, 404, 409, 429}


@pytest.mark.parametrize(
    ("token", "code", "error"),
    [
        ("tok_test_declined", "SVC-PAY-3001", errors.CardDeclinedError),
        ("tok_test_insufficient_funds", "SVC-PAY-3002", errors.InsufficientFundsError),
    ],
)
def test_a_decline_is_a_400_recorded_and_typed(
    server: SandboxServer, client: httpx2.Client, token: str, code: str, error: type
) -> None:
    body = charge_body(token=token)
    answer = client.post(CHARGE, json=body)
    assert_envelope(answer, 400, code)
    events = client.get("/sandbox/events").json()["items"]
    declined = [
        e["data"]
        for e in events
        if e["type"] == "payment.declined" and e["data"]["transactionId"] == body["transactionId"]
    ]
    assert len(declined) == 1, events
    payment = client.get(f"/v1/payments/{declined[0]['paymentId']}")
    assert payment.status_code == 200
    assert payment.json()["status"] == "declined"

    wb = client_for(server)
    with wb, pytest.raises(error) as info:
        wb.payments.charge_card(
            transaction_id=f"txn_{uuid.uuid4().hex}", amount=1_000, card_token=token
        )
    assert isinstance(info.value, errors.DeclineError)
    assert not isinstance(info.value, errors.BadRequestError)
    assert info.value.code == code
    assert info.value.http_status == 400
    assert info.value.retries == 0


def test_a_failed_challenge_is_a_400(client: httpx2.Client, anon: httpx2.Client) -> None:
    charge = client.post(CHARGE, json=charge_body(token="tok_test_3ds_fail")).json()
    answer = anon.post(
        f"/sandbox/acs/{charge['paymentId']}",
        json={"correlationId": charge["correlationId"], "code": CHALLENGE_CODE},
    ).json()
    payload = {"pares": answer["pares"], "correlationId": charge["correlationId"]}
    response = client.post(f"/v1/payments/{charge['paymentId']}/3ds-callback", json=payload)
    assert_envelope(response, 400, "SVC-PAY-3003")
    assert client.get(f"/v1/payments/{charge['paymentId']}").json()["status"] == "failed"


def _oversized(c: httpx2.Client, a: httpx2.Client) -> httpx2.Response:
    body = {**charge_body(), "pad": "x" * 70_000}
    return c.post(CHARGE, content=json.dumps(body).encode())


def _conflict(c: httpx2.Client, a: httpx2.Client) -> httpx2.Response:
    key = str(uuid.uuid4())
    c.post(CHARGE, json=charge_body(), headers={"Idempotency-Key": key})
    return c.post(CHARGE, json=charge_body(amount=20_000), headers={"Idempotency-Key": key})


def _fence_repeat(c: httpx2.Client, a: httpx2.Client) -> httpx2.Response:
    body = charge_body()
    c.post(CHARGE, json=body)
    return c.post(CHARGE, json=body)


def _fail_next_429(c: httpx2.Client, a: httpx2.Client) -> httpx2.Response:
    c.post("/sandbox/fail-next", json={"mode": "429"})
    return c.post(CHARGE, json=charge_body())


ATTEMPTS: dict[str, Callable[[httpx2.Client, httpx2.Client], httpx2.Response]] = {
    "approved": lambda c, a: c.post(CHARGE, json=charge_body()),
    "challenge": lambda c, a: c.post(CHARGE, json=charge_body(token="tok_test_3ds_challenge")),
    "fence-repeat": _fence_repeat,
    "declined": lambda c, a: c.post(CHARGE, json=charge_body(token="tok_test_declined")),
    "insufficient": lambda c, a: c.post(
        CHARGE, json=charge_body(token="tok_test_insufficient_funds")
    ),
    "fence-repeat-of-decline": lambda c, a: _fence_repeat_decline(c),
    "validation": lambda c, a: c.post(CHARGE, json={**charge_body(), "amount": "1"}),
    "raw-pan": lambda c, a: c.post(CHARGE, json=charge_body(token="4111111111111111")),
    "unknown-token": lambda c, a: c.post(CHARGE, json=charge_body(token="tok_nope")),
    "unknown-customer": lambda c, a: c.post(CHARGE, json=charge_body(customerId="cus_nope")),
    "debit-installments": lambda c, a: c.post(
        CHARGE, json=charge_body(token="tok_test_insufficient_funds", installmentCount=3)
    ),
    "broken-json": lambda c, a: c.post(CHARGE, content=b"{nope"),
    "array-body": lambda c, a: c.post(CHARGE, json=[1]),
    "empty-body": lambda c, a: c.post(CHARGE, content=b""),
    "text-plain": lambda c, a: c.post(
        CHARGE, content=json.dumps(charge_body()), headers={"Content-Type": "text/plain"}
    ),
    "oversized": _oversized,
    "bad-idempotency-key": lambda c, a: c.post(
        CHARGE, json=charge_body(), headers={"Idempotency-Key": "x" * 300}
    ),
    "idempotency-conflict": _conflict,
    "no-key": lambda c, a: a.post(CHARGE, json=charge_body()),
    "bad-signature": lambda c, a: a.post(
        CHARGE,
        json=charge_body(),
        headers={"X-Api-Key": DEFAULT_API_KEY, "X-Signature": "0" * 64, "X-Timestamp": "x"},
    ),
    "fail-next-429": _fail_next_429,
}


def _fence_repeat_decline(c: httpx2.Client) -> httpx2.Response:
    body = charge_body(token="tok_test_declined")
    c.post(CHARGE, json=body)
    return c.post(CHARGE, json=body)


@pytest.mark.parametrize("attempt", list(ATTEMPTS))
def test_the_card_charge_answers_only_listed_statuses(
    client: httpx2.Client, anon: httpx2.Client, attempt: str
) -> None:
    response = ATTEMPTS[attempt](client, anon)
    assert response.status_code in CHARGE_STATUSES, (attempt, response.status_code, response.text)
    if response.status_code >= 400:
        code = response.json()["code"]
        assert ERRORS[code].http_status == response.status_code
        if response.status_code == 409:
            assert code in ("SVC-GW-2001", "SVC-GW-2002")


def test_refunds_answer_200_or_202(client: httpx2.Client) -> None:
    settled = client.post(CHARGE, json=charge_body()).json()["paymentId"]
    in_flight = client.post(CHARGE, json=charge_body(token="tok_test_refund_async")).json()[
        "paymentId"
    ]
    assert client.post(f"/v1/payments/{settled}/refund", json={"amount": 100}).status_code == 200
    assert client.post(f"/v1/payments/{in_flight}/refund", json={}).status_code == 202


def test_the_document_lists_the_specs_codes(server: SandboxServer) -> None:
    document = httpx2.get(f"{server.base_url}/openapi.json", timeout=30).json()
    charge = {int(s) for s in document["paths"][CHARGE]["post"]["responses"]}
    assert charge == CHARGE_STATUSES
    refund = {int(s) for s in document["paths"]["/v1/payments/{id}/refund"]["post"]["responses"]}
    assert {s for s in refund if s < 300} == {200, 202}
    statuses = {
        int(s)
        for item in document["paths"].values()
        for operation in item.values()
        for s in operation.get("responses", {})
    }
    assert 402 not in statuses
    assert 413 not in statuses


def test_no_error_code_is_402_or_413() -> None:
    # 431 (SVC-GW-4031) is the HTTP layer's answer to an oversized head, before any route.
    allowed = {400, 401, 404, 405, 409, 429, 431, 500, 503}
    assert {e.http_status for e in ERRORS.values()} <= allowed
