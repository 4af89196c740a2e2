"""Bad creation input gets a 4xx in the envelope naming the field; other merchants see 404."""

from __future__ import annotations

from typing import Any

import httpx2
import pytest

from tests.sandbox.envelope import assert_envelope
from tests.sandbox.subscriptions.api import AYSE, create, post, sub_body
from tests.sandbox.subscriptions.clock import now

CASES: list[tuple[dict[str, Any], str, str]] = [
    ({"amout": 100}, "SVC-VAL-4001", "amout"),
    ({"amountMinor": "9990"}, "SVC-VAL-4001", "amountMinor"),
    ({"amountMinor": 99.9}, "SVC-VAL-4001", "amountMinor"),
    ({"amountMinor": 0}, "SVC-VAL-4001", "amountMinor"),
    ({"amountMinor": 10**15}, "SVC-VAL-4001", "amountMinor"),
    ({"currency": "USD"}, "SVC-VAL-4001", "currency"),
    ({"intervalUnit": "hour"}, "SVC-VAL-4001", "intervalUnit"),
    ({"intervalCount": 0}, "SVC-VAL-4001", "intervalCount"),
    ({"cardToken": "4111111111111111"}, "SVC-VAL-4002", "cardToken"),
    ({"cardToken": "card_123"}, "SVC-VAL-4001", "cardToken"),
    ({"cardToken": "tok_nope"}, "SVC-VAL-4001", "cardToken"),
    ({"trialEndAt": "next week"}, "SVC-VAL-4001", "trialEndAt"),
    ({"trialEndAt": "2020-01-01T00:00:00Z"}, "SVC-VAL-4001", "trialEndAt"),
    ({"customerId": "cus_other_can"}, "SVC-VAL-4001", "customerId"),
    ({"storeId": "sto_other0001"}, "SVC-VAL-4001", "storeId"),
]


@pytest.mark.parametrize(
    ("change", "code", "field"), CASES, ids=[c[2] + str(i) for i, c in enumerate(CASES)]
)
def test_bad_creation_input_is_a_4xx_naming_the_field(
    client: httpx2.Client, change: dict[str, Any], code: str, field: str
) -> None:
    response = client.post("/v1/subscriptions", json=sub_body(AYSE, **change))
    body = assert_envelope(response, 400, code)
    assert field in body["message"]
    assert "4111111111111111" not in response.text
    assert client.get("/v1/subscriptions").json()["items"] == []


def test_missing_fields_and_non_object_bodies(client: httpx2.Client) -> None:
    body = assert_envelope(client.post("/v1/subscriptions", json={}), 400, "SVC-VAL-4001")
    for field in ("storeId", "customerId", "amountMinor", "intervalUnit"):
        assert field in body["message"]
    assert_envelope(client.post("/v1/subscriptions", json=[1]), 400, "SVC-GW-4000")
    assert_envelope(
        client.post(
            "/v1/subscriptions", content=b"{", headers={"Content-Type": "application/json"}
        ),
        400,
        "SVC-GW-4000",
    )
    sub = create(client)
    assert_envelope(post(client, sub["id"], "pause", {"extra": True}), 400, "SVC-VAL-4001")


def test_unsigned_calls_are_refused(anon: httpx2.Client) -> None:
    assert_envelope(anon.get("/v1/subscriptions"), 401, "SVC-GW-1003")


def test_another_merchants_subscription_is_404(
    client: httpx2.Client, other_client: httpx2.Client
) -> None:
    sub = create(client)
    for method, path in (
        ("GET", f"/v1/subscriptions/{sub['id']}"),
        ("GET", f"/v1/subscriptions/{sub['id']}/charges"),
        ("POST", f"/v1/subscriptions/{sub['id']}/pause"),
        ("POST", f"/v1/subscriptions/{sub['id']}/charge-now"),
    ):
        assert_envelope(
            other_client.request(method, path, json={} if method == "POST" else None),
            404,
            "SVC-GW-4004",
        )
    assert client.get(f"/v1/subscriptions/{sub['id']}").json()["status"] == "active"


def test_idempotent_creation_replays_the_first_answer(client: httpx2.Client) -> None:
    headers = {"Idempotency-Key": f"create-{now(client).timestamp()}"}
    first = client.post("/v1/subscriptions", json=sub_body(AYSE), headers=headers)
    again = client.post("/v1/subscriptions", json=sub_body(AYSE), headers=headers)
    assert first.status_code == again.status_code == 201
    assert first.content == again.content
    assert again.headers["X-Request-Id"] == first.headers["X-Request-Id"]
    assert len(client.get("/v1/subscriptions").json()["items"]) == 1
    other = client.post("/v1/subscriptions", json=sub_body(AYSE, amountMinor=500), headers=headers)
    assert_envelope(other, 409, "SVC-GW-2001")
