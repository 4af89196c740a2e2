"""Authentication exactly as specified: the spec's "Rules a test can check", keys, isolation."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import httpx2
import pytest

from tests.sandbox.bodies import charge_body
from tests.sandbox.envelope import assert_envelope
from workbench.config import DEFAULT_API_KEY, DEFAULT_SECRET_KEY
from workbench.sandbox import REVOKED_API_KEY, REVOKED_SECRET_KEY
from workbench.signing import format_timestamp, sign

PATH = "/v1/payments/card"


def _send(
    anon: httpx2.Client,
    *,
    method: str = "POST",
    path: str = PATH,
    sent_path: str | None = None,
    body: bytes | None = None,
    signed_body: bytes | None = None,
    timestamp: str | None = None,
    signed_timestamp: str | None = None,
    signed_method: str | None = None,
    api_key: str = DEFAULT_API_KEY,
    secret: str = DEFAULT_SECRET_KEY,
) -> httpx2.Response:
    """Sign one thing and send another, to show which change breaks the signature."""
    payload = body if body is not None else json.dumps(charge_body()).encode()
    ts = timestamp if timestamp is not None else format_timestamp()
    signature = sign(
        secret,
        signed_timestamp if signed_timestamp is not None else ts,
        signed_method or method,
        path,
        signed_body if signed_body is not None else payload,
    )
    headers = {
        "X-Api-Key": api_key,
        "X-Signature": signature,
        "X-Timestamp": ts,
        "Content-Type": "application/json",
    }
    return anon.request(method, sent_path or path, content=payload, headers=headers)


def test_correctly_signed_request_is_accepted(anon: httpx2.Client) -> None:
    assert _send(anon).status_code == 201


def test_altered_method_case_gives_1002(anon: httpx2.Client) -> None:
    assert_envelope(_send(anon, signed_method="post"), 401, "SVC-GW-1002")


def test_altered_path_gives_1002(anon: httpx2.Client) -> None:
    response = _send(anon, sent_path="/v1/payments/sessions")
    assert_envelope(response, 401, "SVC-GW-1002")


def test_query_string_included_in_signed_path_gives_1002(anon: httpx2.Client) -> None:
    payload = json.dumps(charge_body()).encode()
    ts = format_timestamp()
    signature = sign(DEFAULT_SECRET_KEY, ts, "POST", PATH + "?debug=1", payload)
    headers = {"X-Api-Key": DEFAULT_API_KEY, "X-Signature": signature, "X-Timestamp": ts}
    response = anon.post(PATH + "?debug=1", content=payload, headers=headers)
    assert_envelope(response, 401, "SVC-GW-1002")


def test_query_string_is_not_part_of_the_canonical_path(anon: httpx2.Client) -> None:
    payload = json.dumps(charge_body()).encode()
    ts = format_timestamp()
    signature = sign(DEFAULT_SECRET_KEY, ts, "POST", PATH, payload)
    headers = {"X-Api-Key": DEFAULT_API_KEY, "X-Signature": signature, "X-Timestamp": ts}
    assert anon.post(PATH + "?debug=1", content=payload, headers=headers).status_code == 201


def test_altered_body_bytes_give_1002(anon: httpx2.Client) -> None:
    body = json.dumps(charge_body()).encode()
    response = _send(
        anon, body=body, signed_body=body.replace(b'"amount": 10000', b'"amount":10000')
    )
    assert_envelope(response, 401, "SVC-GW-1002")


def test_altered_timestamp_text_gives_1002(anon: httpx2.Client) -> None:
    now = datetime.now(UTC)
    sent = now.strftime("%Y-%m-%dT%H:%M:%SZ")
    signed = now.strftime("%Y-%m-%dT%H:%M:%S.000Z")
    assert_envelope(_send(anon, timestamp=sent, signed_timestamp=signed), 401, "SVC-GW-1002")


def test_trailing_slash_is_not_part_of_the_canonical_path(anon: httpx2.Client) -> None:
    # Signed over the canonical path (no slash), sent with one: the same route, no redirect.
    assert _send(anon, sent_path=PATH + "/").status_code == 201
    # Signed over the slash itself: the canonical string differs.
    response = _send(anon, path=PATH + "/")
    assert_envelope(response, 401, "SVC-GW-1002")


def test_empty_body_is_signed_as_sha256_of_empty_string(anon: httpx2.Client) -> None:
    ts = format_timestamp()
    signature = sign(DEFAULT_SECRET_KEY, ts, "GET", "/sandbox/fixtures", b"")
    headers = {"X-Api-Key": DEFAULT_API_KEY, "X-Signature": signature, "X-Timestamp": ts}
    assert anon.get("/sandbox/fixtures", headers=headers).status_code == 200
    wrong = sign(DEFAULT_SECRET_KEY, ts, "GET", "/sandbox/fixtures", b"{}")
    headers["X-Signature"] = wrong
    assert_envelope(anon.get("/sandbox/fixtures", headers=headers), 401, "SVC-GW-1002")


@pytest.mark.parametrize("minutes", [6, -6])
def test_timestamp_more_than_5_minutes_away_gives_1001(anon: httpx2.Client, minutes: int) -> None:
    ts = format_timestamp(datetime.now(UTC) + timedelta(minutes=minutes))
    assert_envelope(_send(anon, timestamp=ts), 401, "SVC-GW-1001")


@pytest.mark.parametrize("digits", [3, 6, 7, 9])
def test_a_timestamp_with_a_fraction_of_a_second_is_accepted(
    anon: httpx2.Client, digits: int
) -> None:
    now = datetime.now(UTC)
    ts = now.strftime("%Y-%m-%dT%H:%M:%S.") + f"{now.microsecond:06d}000"[:digits] + "Z"
    assert _send(anon, timestamp=ts).status_code == 201


@pytest.mark.parametrize("text", ["yesterday", "2026-13-01T00:00:00Z", "1700000000"])
def test_malformed_timestamp_gives_1001(anon: httpx2.Client, text: str) -> None:
    assert_envelope(_send(anon, timestamp=text), 401, "SVC-GW-1001")


def test_missing_timestamp_gives_1001(anon: httpx2.Client) -> None:
    payload = json.dumps(charge_body()).encode()
    signature = sign(DEFAULT_SECRET_KEY, "", "POST", PATH, payload)
    headers = {"X-Api-Key": DEFAULT_API_KEY, "X-Signature": signature}
    assert_envelope(anon.post(PATH, content=payload, headers=headers), 401, "SVC-GW-1001")


def test_timestamp_with_offset_instead_of_z_is_invalid(anon: httpx2.Client) -> None:
    ts = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S+00:00")
    body = assert_envelope(_send(anon, timestamp=ts), 401, "SVC-GW-1001")
    assert "offset" in body["message"] or "Z" in body["message"]


def test_missing_api_key_gives_1003(anon: httpx2.Client) -> None:
    assert_envelope(anon.post(PATH, json=charge_body()), 401, "SVC-GW-1003")


def test_unknown_api_key_gives_1003(anon: httpx2.Client) -> None:
    assert_envelope(_send(anon, api_key="pk_test_nobody"), 401, "SVC-GW-1003")


def test_revoked_api_key_gives_1003(anon: httpx2.Client) -> None:
    response = _send(anon, api_key=REVOKED_API_KEY, secret=REVOKED_SECRET_KEY)
    body = assert_envelope(response, 401, "SVC-GW-1003")
    assert "revoked" in body["message"]


def test_wrong_secret_gives_1002(anon: httpx2.Client) -> None:
    assert_envelope(_send(anon, secret="sk_test_wrong"), 401, "SVC-GW-1002")


def test_auth_errors_never_echo_the_signature_or_secret(anon: httpx2.Client) -> None:
    response = _send(anon, secret="sk_test_wrong")
    assert DEFAULT_SECRET_KEY not in response.text
    assert response.request.headers["X-Signature"] not in response.text


def test_public_status_needs_no_signature(client: httpx2.Client, anon: httpx2.Client) -> None:
    payment = client.post(PATH, json=charge_body()).json()
    response = anon.get(f"/v1/payments/{payment['paymentId']}/public-status")
    assert response.status_code == 200
    assert response.json() == {"paymentId": payment["paymentId"], "status": "captured"}


def test_another_merchants_payment_is_404_not_403(
    client: httpx2.Client, other_client: httpx2.Client
) -> None:
    payment_id = client.post(PATH, json=charge_body(capture=False)).json()["paymentId"]
    assert_envelope(other_client.get(f"/v1/payments/{payment_id}"), 404, "SVC-GW-4004")
    for action in ("capture", "void", "refund"):
        response = other_client.post(f"/v1/payments/{payment_id}/{action}", json={})
        assert_envelope(response, 404, "SVC-GW-4004")
    assert client.get(f"/v1/payments/{payment_id}").json()["status"] == "authorized"
