"""The server's frame: start, fixtures, request ids, the envelope, the OpenAPI document."""

from __future__ import annotations

import uuid

import httpx2

from tests.sandbox.clients import signed_client
from tests.sandbox.envelope import assert_envelope
from workbench.config import DEFAULT_API_KEY
from workbench.sandbox import DEMO_MERCHANT_ID, DEMO_STORE_ID, OTHER_MERCHANT_ID, SandboxServer


def test_fixtures_list_merchant_store_customers_and_test_cards(client: httpx2.Client) -> None:
    body = client.get("/sandbox/fixtures").json()
    assert body["merchantId"] == DEMO_MERCHANT_ID
    assert body["storeId"] == DEMO_STORE_ID
    assert len(body["customers"]) >= 2
    assert all(c["id"].startswith("cus_") and c["savedCards"] for c in body["customers"])
    tokens = {card["token"] for card in body["testCards"]}
    assert tokens == {
        "tok_test_success",
        "tok_test_3ds_challenge",
        "tok_test_3ds_fail",
        "tok_test_insufficient_funds",
        "tok_test_declined",
        "tok_test_refund_async",
        "tok_test_renewal_fails",
    }


def test_second_merchant_sees_only_its_own_fixtures(other_client: httpx2.Client) -> None:
    body = other_client.get("/sandbox/fixtures").json()
    assert body["merchantId"] == OTHER_MERCHANT_ID
    assert all(c["id"].startswith("cus_other") for c in body["customers"])


def test_request_id_is_generated_when_absent(client: httpx2.Client) -> None:
    response = client.get("/sandbox/fixtures")
    assert uuid.UUID(response.headers["X-Request-Id"]).version == 4


def test_request_id_is_echoed(client: httpx2.Client) -> None:
    rid = str(uuid.uuid4())
    response = client.get("/sandbox/fixtures", headers={"X-Request-Id": rid})
    assert response.headers["X-Request-Id"] == rid


def test_malformed_request_id_is_refused(client: httpx2.Client) -> None:
    response = client.get("/sandbox/fixtures", headers={"X-Request-Id": "not-a-uuid"})
    assert_envelope(response, 400, "SVC-GW-4000")


def test_unknown_route_is_404_in_envelope(client: httpx2.Client) -> None:
    assert_envelope(client.get("/v1/nothing-here"), 404, "SVC-GW-4004")


def test_wrong_method_is_405_in_envelope(client: httpx2.Client) -> None:
    assert_envelope(client.delete("/v1/payments/card"), 405, "SVC-GW-4005")


def test_405_lists_every_method_of_the_path_in_allow(client: httpx2.Client) -> None:
    # RFC 9110 15.5.6: a 405 must say what the target does accept.
    # /v1/payments/card is both the charge route and a payment id for GET /v1/payments/{id}.
    assert client.delete("/v1/payments/card").headers["allow"] == "GET, POST"
    assert client.put("/v1/payments/pay_1/public-status").headers["allow"] == "GET"


def test_openapi_document_is_served_without_signature(anon: httpx2.Client) -> None:
    doc = anon.get("/openapi.json").json()
    assert "/v1/payments/card" in doc["paths"]
    assert "/v1/payments/sessions" in doc["paths"]
    assert "X-Api-Key" in str(doc["components"]["securitySchemes"])


def test_server_context_manager_stops_serving() -> None:
    from workbench.sandbox import SandboxConfig

    with SandboxServer(SandboxConfig(db_url="sqlite://")) as server:
        base = server.base_url
        with signed_client(base) as c:
            assert c.get("/sandbox/fixtures").status_code == 200
    try:
        httpx2.get(base + "/healthz", timeout=2, verify=False)
    except httpx2.TransportError:
        pass
    else:
        raise AssertionError("the server still answers after stop()")


def test_demo_key_is_the_shared_default(client: httpx2.Client) -> None:
    assert client.auth.api_key == DEFAULT_API_KEY  # type: ignore[union-attr]
