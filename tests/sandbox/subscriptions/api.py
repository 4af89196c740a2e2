"""The subscription routes as the tests call them: create, read, act, charges, events.

Also the demo customers and a valid creation body (`sub_body`). Each call asserts the
status it expects and returns the decoded body, so a test reads as the flow it checks.
"""

from __future__ import annotations

from typing import Any

import httpx2

from workbench.sandbox import DEMO_STORE_ID

__all__ = [
    "AYSE",
    "MEHMET",
    "ZEYNEP",
    "charges",
    "create",
    "get",
    "post",
    "sub_body",
    "sub_events",
]

AYSE = "cus_demo_ayse"  # default card tok_test_success
MEHMET = "cus_demo_mehmet"  # default card tok_test_renewal_fails
ZEYNEP = "cus_demo_zeynep"  # default card tok_test_refund_async


def sub_body(customer: str = AYSE, **extra: Any) -> dict[str, Any]:
    """A valid creation body: 99,90 TL monthly."""
    body: dict[str, Any] = {
        "storeId": DEMO_STORE_ID,
        "customerId": customer,
        "amountMinor": 9_990,
        "currency": "TRY",
        "intervalCount": 1,
        "intervalUnit": "month",
    }
    body.update(extra)
    return body


def create(client: httpx2.Client, customer: str = AYSE, **extra: Any) -> dict[str, Any]:
    """Create a subscription; returns the creation response."""
    response = client.post("/v1/subscriptions", json=sub_body(customer, **extra))
    assert response.status_code == 201, response.text
    return dict(response.json())


def get(client: httpx2.Client, sub_id: str) -> dict[str, Any]:
    """Read a subscription."""
    response = client.get(f"/v1/subscriptions/{sub_id}")
    assert response.status_code == 200, response.text
    return dict(response.json())


def charges(client: httpx2.Client, sub_id: str) -> list[dict[str, Any]]:
    """A subscription's charge items."""
    response = client.get(f"/v1/subscriptions/{sub_id}/charges")
    assert response.status_code == 200, response.text
    return list(response.json()["items"])


def post(client: httpx2.Client, sub_id: str, action: str, body: Any = None) -> httpx2.Response:
    """POST an action with ``{}`` (or the given body)."""
    return client.post(f"/v1/subscriptions/{sub_id}/{action}", json={} if body is None else body)


def sub_events(client: httpx2.Client, sub_id: str) -> list[str]:
    """The types of a subscription's events, oldest first."""
    items = client.get("/sandbox/events").json()["items"]
    return [
        e["type"]
        for e in items
        if e["type"].startswith("subscription.") and e["data"]["subscriptionId"] == sub_id
    ]
