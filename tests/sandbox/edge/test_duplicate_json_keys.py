"""A JSON body with a key twice is refused, naming the key.

Before, the last one silently won, so ``"cardToken"`` twice charged whichever came
last. Now every JSON route (the card charge, called straight or not, sessions, tokens,
payment actions, subscriptions, the buyer portal, the ACS JSON and the ``/sandbox``
control routes) answers 400 ``SVC-GW-4000`` naming the key, and nothing is written.
Over real HTTP on SQLite and PostgreSQL.
"""

from __future__ import annotations

import json
import uuid

import httpx2
import pytest

from tests.sandbox.bodies import charge_body, txn
from tests.sandbox.envelope import assert_envelope
from workbench.sandbox import OTHER_API_KEY, OTHER_SECRET_KEY, SandboxServer
from workbench.sandbox.edge.jsonbody import DuplicateKeyError, loads

CHARGE = "/v1/payments/card"


def _with_twice(body: dict[str, object], key: str, first: object, last: object) -> bytes:
    """``body`` serialised with ``key`` appearing twice, ``first`` then ``last``."""
    rest = json.dumps({k: v for k, v in body.items() if k != key})[1:-1]
    head = f"{json.dumps(key)}: {json.dumps(first)}, {json.dumps(key)}: {json.dumps(last)}"
    return ("{" + head + (", " + rest if rest else "") + "}").encode()


def _assert_refused_naming(response: httpx2.Response, key: str) -> None:
    body = assert_envelope(response, 400, "SVC-GW-4000")
    assert f'"{key}"' in body["message"], body


@pytest.mark.parametrize(
    ("first", "last"),
    [("tok_test_success", "tok_test_declined"), ("tok_test_declined", "tok_test_success")],
)
def test_card_token_twice_charges_nothing(client: httpx2.Client, first: str, last: str) -> None:
    body = charge_body()
    raw = _with_twice(body, "cardToken", first, last)
    _assert_refused_naming(client.post(CHARGE, content=raw), "cardToken")
    # Nothing was written: the transactionId is still free (201, not the fence's 200).
    again = client.post(CHARGE, json={**body, "cardToken": "tok_test_success"})
    assert again.status_code == 201, again.text


def test_a_duplicate_inside_a_nested_object(client: httpx2.Client) -> None:
    split = '{"submerchantId": "smr_1", "amountMinor": 100, "amountMinor": 9000}'
    head = f'{{"transactionId": "{txn()}", "amount": 10000, "currency": "TRY", '
    raw = (head + f'"returnUrl": "https://merchant.example/r", "splits": [{split}]}}').encode()
    _assert_refused_naming(client.post("/v1/payments/sessions", content=raw), "amountMinor")


def test_with_an_idempotency_key_nothing_is_cached(client: httpx2.Client) -> None:
    key = str(uuid.uuid4())
    body = charge_body()
    raw = _with_twice(body, "amount", 1, body["amount"])
    _assert_refused_naming(
        client.post(CHARGE, content=raw, headers={"Idempotency-Key": key}), "amount"
    )
    fixed = client.post(CHARGE, json=body, headers={"Idempotency-Key": key})
    assert fixed.status_code == 201, fixed.text


@pytest.fixture(scope="module")
def json_routes(server: SandboxServer) -> list[tuple[str, str]]:
    document = httpx2.get(f"{server.base_url}/openapi.json", timeout=30).json()
    found = [
        (method.upper(), path.replace("{", "x").replace("}", ""))
        for path, item in document["paths"].items()
        for method in item
        if method in ("post", "put", "patch")
    ]
    assert len(found) >= 18, found
    return found


@pytest.mark.parametrize("signed", [True, False], ids=["signed", "unsigned"])
def test_every_json_route_refuses_a_key_twice(
    server: SandboxServer, json_routes: list[tuple[str, str]], signed: bool
) -> None:
    raw = b'{"zzKey": 1, "zzKey": 2}'
    client = (
        httpx2.Client(base_url=server.base_url, timeout=30, verify=False)
        if not signed
        else _other(server)
    )
    with client:
        for method, path in json_routes:
            response = client.request(
                method, path, content=raw, headers={"Content-Type": "application/json"}
            )
            if not signed and response.status_code == 401:
                continue  # a signed route: refused before its body is read
            assert response.status_code == 400, (method, path, response.text)
            _assert_refused_naming(response, "zzKey")


def _other(server: SandboxServer) -> httpx2.Client:
    from tests.sandbox.clients import signed_client

    # The second merchant: even a control route that ignores its body changes nothing here.
    return signed_client(server.base_url, OTHER_API_KEY, OTHER_SECRET_KEY)


def test_hosted_pages_json_and_the_portal(anon: httpx2.Client) -> None:
    raw = b'{"correlationId": "a", "code": "1", "code": "123456"}'
    _assert_refused_naming(
        anon.post("/sandbox/acs/pay_x", content=raw, headers={"Content-Type": "application/json"}),
        "code",
    )
    raw = b'{"atPeriodEnd": true, "atPeriodEnd": false}'
    response = anon.post(
        "/v1/public/subscriptions/nope/cancel",
        content=raw,
        headers={"Content-Type": "application/json"},
    )
    _assert_refused_naming(response, "atPeriodEnd")


def test_one_parsing_rule() -> None:
    assert loads(b'{"a": {"b": 1}, "c": [1, {"d": 2}]}') == {"a": {"b": 1}, "c": [1, {"d": 2}]}
    with pytest.raises(DuplicateKeyError) as info:
        loads(b'{"a": [{"d": 1, "d": 1}]}')
    assert info.value.key == "d"
    with pytest.raises(json.JSONDecodeError):
        loads(b"{nope")
