"""A trailing slash is not part of the canonical path on the server either.

The spec's canonical string takes the route path with "no trailing slash", so a
spec-correct client calling ``/v1/subscriptions/`` signs ``/v1/subscriptions``. The
sandbox canonicalises the received path the same way before verifying and answers the
same route, never with a redirect. Signing the slash itself stays a signature mistake.
Over real HTTP on SQLite and PostgreSQL.
"""

from __future__ import annotations

import json
import uuid

import httpx2
import pytest

from tests.sandbox.bodies import charge_body, txn
from tests.sandbox.envelope import assert_envelope
from workbench.config import DEFAULT_API_KEY, DEFAULT_SECRET_KEY
from workbench.signature_debug import MISTAKES, diagnose
from workbench.signing import format_timestamp, sign, sign_request


def _signed_as_spec(
    anon: httpx2.Client, method: str, url: str, body: bytes = b"", **headers: str
) -> httpx2.Response:
    """Sign as the spec says (``sign_request`` drops the slash), send ``url`` as written."""
    signed = sign_request(
        api_key=DEFAULT_API_KEY, secret_key=DEFAULT_SECRET_KEY, method=method, url=url, body=body
    )
    all_headers = {**signed.as_dict(), "Content-Type": "application/json", **headers}
    return anon.request(method, url, content=body or None, headers=all_headers)


def _no_redirect(response: httpx2.Response) -> None:
    assert not 300 <= response.status_code < 400, response.headers
    assert "location" not in response.headers


def test_get_with_a_trailing_slash_answers_the_route(anon: httpx2.Client) -> None:
    plain = _signed_as_spec(anon, "GET", "/v1/subscriptions?limit=2")
    slashed = _signed_as_spec(anon, "GET", "/v1/subscriptions/?limit=2")
    _no_redirect(slashed)
    assert plain.status_code == slashed.status_code == 200, slashed.text
    assert slashed.json() == plain.json()
    fixtures = _signed_as_spec(anon, "GET", "/sandbox/fixtures/")
    assert fixtures.status_code == 200, fixtures.text


@pytest.mark.parametrize("path", ["/v1/payments/card/", "/v1/payments/card//"])
def test_a_charge_posted_with_a_trailing_slash_is_made(
    anon: httpx2.Client, client: httpx2.Client, path: str
) -> None:
    body = json.dumps(charge_body()).encode()
    response = _signed_as_spec(anon, "POST", path, body)
    _no_redirect(response)
    assert response.status_code == 201, response.text
    payment = client.get(f"/v1/payments/{response.json()['paymentId']}/")
    assert payment.status_code == 200
    assert payment.json()["status"] == "captured"


def test_routes_with_path_parameters_and_bodies(anon: httpx2.Client, client: httpx2.Client) -> None:
    session = {
        "transactionId": txn(),
        "amount": 10_000,
        "currency": "TRY",
        "returnUrl": "https://merchant.example/return",
    }
    created = _signed_as_spec(anon, "POST", "/v1/payments/sessions/", json.dumps(session).encode())
    assert created.status_code == 201, created.text
    pid = client.post("/v1/payments/card", json=charge_body(capture=False)).json()["paymentId"]
    captured = _signed_as_spec(anon, "POST", f"/v1/payments/{pid}/capture/", b"{}")
    assert captured.status_code == 200, captured.text
    assert captured.json()["status"] == "captured"


def test_one_idempotency_endpoint_with_or_without_the_slash(anon: httpx2.Client) -> None:
    key = str(uuid.uuid4())
    body = json.dumps(charge_body()).encode()
    first = _signed_as_spec(anon, "POST", "/v1/payments/card", body, **{"Idempotency-Key": key})
    again = _signed_as_spec(anon, "POST", "/v1/payments/card/", body, **{"Idempotency-Key": key})
    assert first.status_code == again.status_code == 201
    assert again.headers.get("Idempotent-Replayed") == "true"
    assert again.json()["paymentId"] == first.json()["paymentId"]


def test_signing_the_slash_itself_is_still_a_signature_mistake(anon: httpx2.Client) -> None:
    ts = format_timestamp()
    signature = sign(DEFAULT_SECRET_KEY, ts, "GET", "/sandbox/fixtures/", b"")
    headers = {"X-Api-Key": DEFAULT_API_KEY, "X-Signature": signature, "X-Timestamp": ts}
    assert_envelope(anon.get("/sandbox/fixtures/", headers=headers), 401, "SVC-GW-1002")


def test_public_routes_answer_alike(anon: httpx2.Client) -> None:
    plain = anon.get("/v1/public/subscriptions/nope")
    slashed = anon.get("/v1/public/subscriptions/nope/")
    _no_redirect(slashed)
    assert plain.status_code == slashed.status_code == 404
    assert plain.json()["code"] == slashed.json()["code"] == "SVC-GW-4004"


def test_the_debugger_agrees_with_the_server() -> None:
    ts = format_timestamp()
    right = sign(DEFAULT_SECRET_KEY, ts, "GET", "/v1/subscriptions", b"")
    slashed = sign(DEFAULT_SECRET_KEY, ts, "GET", "/v1/subscriptions/", b"")
    kwargs = {"secret_key": DEFAULT_SECRET_KEY, "timestamp": ts, "method": "GET", "body": b""}
    assert diagnose(url="/v1/subscriptions/", given=right, **kwargs).matches
    found = diagnose(url="/v1/subscriptions/", given=slashed, **kwargs)
    assert not found.matches
    assert [m.name for m in found.mistakes] == ["trailing-slash"]
    assert "/x/ as /x" in MISTAKES["trailing-slash"].description
