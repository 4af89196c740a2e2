"""``requestId`` in every error body equals the response's X-Request-Id.

The spec names ``requestId`` as what a merchant quotes to support, so one response
must never carry two ids. Walked over real HTTP on SQLite and PostgreSQL: validation,
authentication, not found, rate limits, the card charge called straight, the ACS and portal
JSON, repeats of a recorded decline (Idempotency-Key replay, the ``transactionId``
fence, a duplicate 3-D Secure callback), then a sweep over every route of the OpenAPI
document, signed and unsigned, with and without an X-Request-Id sent.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import httpx2
import pytest

from tests.sandbox.bodies import charge_body
from tests.sandbox.clients import signed_client
from workbench.sandbox import OTHER_API_KEY, OTHER_SECRET_KEY, SandboxServer
from workbench.sandbox.cards import CHALLENGE_CODE

Send = Callable[[httpx2.Client, httpx2.Client], httpx2.Response]


def _same_id(response: httpx2.Response, sent: str | None = None) -> str:
    """The response is an error envelope whose requestId is its X-Request-Id."""
    assert response.status_code >= 400, response.text
    body = response.json()
    assert set(body) == {"code", "message", "requestId"}, body
    header = response.headers.get("X-Request-Id")
    assert body["requestId"] == header, (response.status_code, body, header)
    uuid.UUID(header)
    if sent is not None:
        assert header == sent
    return str(header)


def _decline(client: httpx2.Client, **headers: str) -> tuple[dict[str, Any], httpx2.Response]:
    body = charge_body(token="tok_test_declined")
    return body, client.post("/v1/payments/card", json=body, headers=headers)


CASES: dict[str, Send] = {
    "validation-on-the-route": lambda c, a: c.post(
        "/v1/payments/card", json={**charge_body(), "amount": "100"}
    ),
    "broken-json": lambda c, a: c.post("/v1/payments/card", content=b"{broken"),
    "unknown-field-on-sessions": lambda c, a: c.post("/v1/payments/sessions", json={"x": 1}),
    "missing-api-key": lambda c, a: a.post("/v1/payments/card", json=charge_body()),
    "bad-signature": lambda c, a: a.get(
        "/sandbox/fixtures",
        headers={"X-Api-Key": "pk_test_x", "X-Signature": "0" * 64, "X-Timestamp": "x"},
    ),
    "not-found-object": lambda c, a: c.get("/v1/payments/pay_nope"),
    "not-found-route": lambda c, a: c.get("/v1/nothing-here"),
    "method-not-allowed": lambda c, a: c.delete("/v1/payments/card"),
    "charge-decline": lambda c, a: _decline(c)[1],
    "charge-unknown-token": lambda c, a: c.post(
        "/v1/payments/card", json=charge_body(token="tok_never_made")
    ),
    "charge-raw-pan": lambda c, a: c.post(
        "/v1/payments/card", json=charge_body(token="4111111111111111")
    ),
    "acs-json-validation": lambda c, a: a.post("/sandbox/acs/pay_nope", json={"code": 1}),
    "acs-json-not-found": lambda c, a: a.post(
        "/sandbox/acs/pay_nope", json={"correlationId": "x", "code": "1"}
    ),
    "portal-json-not-found": lambda c, a: a.get("/v1/public/subscriptions/nope"),
    "public-status-not-found": lambda c, a: a.get("/v1/payments/pay_nope/public-status"),
    "body-too-large": lambda c, a: c.post("/v1/payments/card", content=b"{" + b" " * 70_000),
    "malformed-request-id": lambda c, a: a.get("/healthz", headers={"X-Request-Id": "nope"}),
}


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("given", [False, True], ids=["generated-id", "sent-id"])
def test_every_error_path_has_one_request_id(
    client: httpx2.Client, anon: httpx2.Client, case: str, given: bool
) -> None:
    sent = str(uuid.uuid4())
    if given and case != "malformed-request-id":
        client.headers["X-Request-Id"] = sent
        anon.headers["X-Request-Id"] = sent
    response = CASES[case](client, anon)
    _same_id(response, sent if given and case != "malformed-request-id" else None)


def test_rate_limits_and_fail_next(server: SandboxServer, client: httpx2.Client) -> None:
    client.post("/sandbox/fail-next", json={"mode": "429"})
    _same_id(client.post("/v1/payments/card", json=charge_body()))
    with signed_client(server.base_url, OTHER_API_KEY, OTHER_SECRET_KEY) as other:
        other.post("/sandbox/rate-limit", json={"perSecond": 0.01, "burst": 1})
        try:
            answers = [other.get("/v1/payments/pay_nope") for _ in range(3)]
        finally:
            other.post("/sandbox/rate-limit", json={"perSecond": None})
    limited = [r for r in answers if r.status_code == 429]
    assert limited, [r.status_code for r in answers]
    for response in limited:
        _same_id(response)


def test_idempotent_replay_of_a_decline_carries_the_originals_both(
    client: httpx2.Client,
) -> None:
    key = str(uuid.uuid4())
    body, first = _decline(client, **{"Idempotency-Key": key})
    original = _same_id(first)
    again = client.post(
        "/v1/payments/card",
        json=body,
        headers={"Idempotency-Key": key, "X-Request-Id": str(uuid.uuid4())},
    )
    assert again.headers.get("Idempotent-Replayed") == "true"
    assert _same_id(again) == original
    assert again.content == first.content


def test_transaction_id_fence_repeat_of_a_decline(client: httpx2.Client) -> None:
    body, first = _decline(client)
    _same_id(first)
    again = client.post("/v1/payments/card", json=body, headers={"X-Request-Id": str(uuid.uuid4())})
    assert again.json()["code"] == first.json()["code"]
    _same_id(again)
    # The fence's answer stored under a fresh Idempotency-Key, then replayed: still one id.
    key = str(uuid.uuid4())
    stored = client.post("/v1/payments/card", json=body, headers={"Idempotency-Key": key})
    replayed = client.post("/v1/payments/card", json=body, headers={"Idempotency-Key": key})
    assert _same_id(stored) == _same_id(replayed)


def test_duplicate_3ds_callback_of_a_failed_challenge(
    client: httpx2.Client, anon: httpx2.Client
) -> None:
    charge = client.post("/v1/payments/card", json=charge_body(token="tok_test_3ds_fail")).json()
    answer = anon.post(
        f"/sandbox/acs/{charge['paymentId']}",
        json={"correlationId": charge["correlationId"], "code": CHALLENGE_CODE},
    ).json()
    payload = {"pares": answer["pares"], "correlationId": charge["correlationId"]}
    path = f"/v1/payments/{charge['paymentId']}/3ds-callback"
    first = client.post(path, json=payload)
    second = client.post(path, json=payload, headers={"X-Request-Id": str(uuid.uuid4())})
    assert first.json()["code"] == second.json()["code"] == "SVC-PAY-3003"
    _same_id(first)
    _same_id(second)


# -- the sweep: every route of the OpenAPI document, several ways of getting it wrong --


@pytest.fixture(scope="module")
def routes(server: SandboxServer) -> list[tuple[str, str]]:
    document = httpx2.get(f"{server.base_url}/openapi.json", timeout=30).json()
    found = [
        (method.upper(), path)
        for path, item in document["paths"].items()
        for method in item
        if method in ("get", "post", "put", "delete", "patch")
    ]
    assert len(found) > 20, found
    return found


_SKIP_SIDE_EFFECTS = (
    "/sandbox/fail-next",
    "/sandbox/latency",
    "/sandbox/rate-limit",
    "/sandbox/reset",
)


def _fill(path: str) -> str:
    return path.replace("{", "x").replace("}", "") if "{" in path else path


BODIES: dict[str, bytes | None] = {
    "no-body": None,
    "unknown-field": json.dumps({"zzUnknown": 1}).encode(),
    "not-an-object": b"[1, 2]",
    "broken": b'{"a": ',
}


@pytest.fixture
def sweep_clients(server: SandboxServer) -> Iterator[dict[str, httpx2.Client]]:
    with (
        signed_client(server.base_url) as signed,
        httpx2.Client(base_url=server.base_url, timeout=30, verify=False) as unsigned,
    ):
        yield {"signed": signed, "unsigned": unsigned}


@pytest.mark.parametrize("who", ["signed", "unsigned"])
@pytest.mark.parametrize("body", list(BODIES))
def test_sweep_over_every_route(
    routes: list[tuple[str, str]],
    sweep_clients: dict[str, httpx2.Client],
    who: str,
    body: str,
) -> None:
    client = sweep_clients[who]
    checked = 0
    for method, path in routes:
        if path in _SKIP_SIDE_EFFECTS:
            continue
        for sent in (None, str(uuid.uuid4())):
            headers = {"Content-Type": "application/json"}
            if sent is not None:
                headers["X-Request-Id"] = sent
            response = client.request(method, _fill(path), content=BODIES[body], headers=headers)
            assert response.status_code < 500, (method, path, response.text)
            if response.status_code >= 400 and response.headers.get("content-type", "").startswith(
                "application/json"
            ):
                _same_id(response, sent)
                checked += 1
            else:
                assert response.headers.get("X-Request-Id"), (method, path)
    assert checked > 10
