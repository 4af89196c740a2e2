"""The OpenAPI document says what the sandbox enforces, and the sandbox takes what it says.

Checkout sessions: every combination of ``mode``, ``amount``, ``customerId`` and
``splits`` (absent, null, or a value) is checked against the document's own schema (JSON
Schema 2020-12, as OpenAPI 3.1 reads it) and sent to the sandbox: a body the schema
takes is created (201), one it refuses is refused (400). The document once left
``amount`` optional in every mode, so a valid-looking body was refused.

Whole numbers: JSON Schema's ``integer`` is a number with no fractional part, however
written, so ``10000.0`` is one; the sandbox reads it as ``10000`` on every route (it
refused it as "not a valid integer"), and refuses ``10000.5`` as the document does.
"""

from __future__ import annotations

import itertools
import json
import uuid
from typing import Any

import httpx2
import jsonschema
import pytest

from tests.sandbox.envelope import assert_envelope

_ABSENT = object()
MODES = [_ABSENT, "payment", "qr", "card_update_only"]
AMOUNTS = [_ABSENT, None, 10_000, 10_000.0, 10_000.5]
CUSTOMERS = [_ABSENT, None, "cus_demo_ayse"]
SPLITS = [_ABSENT, None, [{"submerchantId": "sub_1", "amountMinor": 100}]]


@pytest.fixture(scope="module")
def session_schema(server: Any) -> jsonschema.Draft202012Validator:
    document = httpx2.get(f"{server.base_url}/openapi.json", timeout=30).json()
    root = {"$ref": "#/components/schemas/SessionRequest", "components": document["components"]}
    return jsonschema.Draft202012Validator(root)


def test_every_session_body_the_schema_takes_is_created_and_no_other(
    client: httpx2.Client, session_schema: jsonschema.Draft202012Validator
) -> None:
    disagreements = []
    for mode, amount, customer, splits in itertools.product(MODES, AMOUNTS, CUSTOMERS, SPLITS):
        body: dict[str, Any] = {
            "transactionId": f"txn_{uuid.uuid4().hex}",
            "currency": "TRY",
            "returnUrl": "https://shop.example/back",
        }
        for key, value in (
            ("mode", mode),
            ("amount", amount),
            ("customerId", customer),
            ("splits", splits),
        ):
            if value is not _ABSENT:
                body[key] = value
        valid = session_schema.is_valid(body)
        answer = client.post("/v1/payments/sessions", json=body)
        if answer.status_code not in (201, 400):
            disagreements.append((body, answer.status_code, answer.text))
        elif valid != (answer.status_code == 201):
            disagreements.append((body, valid, answer.text))
    assert not disagreements, json.dumps(disagreements, indent=1, default=str)[:4000]


def test_a_whole_number_with_a_fraction_is_the_integer_it_equals(client: httpx2.Client) -> None:
    body = {
        "transactionId": f"txn_{uuid.uuid4().hex}",
        "amount": 10_000.0,
        "currency": "TRY",
        "cardToken": "tok_test_success",
        "installmentCount": 1e0,
        "threeDSecure": False,
    }
    charged = client.post("/v1/payments/card", json=body)
    assert charged.status_code == 201, charged.text
    assert charged.text.count('"amount":10000,') == 1
    refunded = client.post(
        f"/v1/payments/{charged.json()['paymentId']}/refund", json={"amount": 2.5e3}
    )
    assert refunded.status_code in (200, 202), refunded.text
    assert refunded.json()["lastRefund"]["amount"] == 2_500
    fraction = {**body, "transactionId": f"txn_{uuid.uuid4().hex}", "amount": 10_000.5}
    refused = assert_envelope(client.post("/v1/payments/card", json=fraction), 400, "SVC-VAL-4001")
    assert refused["message"].startswith("amount")
    advanced = client.post("/sandbox/clock/advance", json={"seconds": 1.0})
    assert advanced.status_code == 200, advanced.text
