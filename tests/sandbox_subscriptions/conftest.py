"""Fixtures: the sandbox HTTP server per storage backend, signed clients, subscription helpers.

The server and client helpers are the sandbox suite's (`tests.sandbox.conftest`); each
test here starts from a reset merchant (no objects, clock at the wall clock).
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import httpx
import pytest

from tests.postgres import database_url
from tests.sandbox.clients import signed_client
from workbench.sandbox import (
    DEMO_STORE_ID,
    OTHER_API_KEY,
    OTHER_SECRET_KEY,
    SandboxConfig,
    SandboxServer,
)

AYSE = "cus_demo_ayse"  # default card tok_test_success
MEHMET = "cus_demo_mehmet"  # default card tok_test_renewal_fails
ZEYNEP = "cus_demo_zeynep"  # default card tok_test_refund_async


@pytest.fixture(scope="session", params=["sqlite", "postgres"])
def db_url(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    """One database per backend for the whole session (PostgreSQL when reachable)."""
    with database_url(request.param, tmp_path_factory.mktemp("subs")) as url:
        yield url


@pytest.fixture(scope="session")
def server(db_url: str) -> Iterator[SandboxServer]:
    """The sandbox on a free port; the reconciler runs only when a test asks."""
    config = SandboxConfig(
        db_url=db_url, run_reconciler_in_background=False, rate_limit_per_second=0
    )
    with SandboxServer(config) as running:
        yield running


@pytest.fixture
def client(server: SandboxServer) -> Iterator[httpx.Client]:
    """The demo merchant, reset before the test."""
    with signed_client(server.base_url) as c:
        assert c.post("/sandbox/reset", json={}).status_code == 200
        yield c


@pytest.fixture
def other_client(server: SandboxServer) -> Iterator[httpx.Client]:
    """The second merchant, reset before the test."""
    with signed_client(server.base_url, OTHER_API_KEY, OTHER_SECRET_KEY) as c:
        assert c.post("/sandbox/reset", json={}).status_code == 200
        yield c


@pytest.fixture
def anon(server: SandboxServer) -> Iterator[httpx.Client]:
    """An unsigned client (the buyer's browser)."""
    with httpx.Client(base_url=server.base_url, timeout=30) as c:
        yield c


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


def create(client: httpx.Client, customer: str = AYSE, **extra: Any) -> dict[str, Any]:
    """Create a subscription; returns the creation response."""
    response = client.post("/v1/subscriptions", json=sub_body(customer, **extra))
    assert response.status_code == 201, response.text
    return dict(response.json())


def get(client: httpx.Client, sub_id: str) -> dict[str, Any]:
    """Read a subscription."""
    response = client.get(f"/v1/subscriptions/{sub_id}")
    assert response.status_code == 200, response.text
    return dict(response.json())


def charges(client: httpx.Client, sub_id: str) -> list[dict[str, Any]]:
    """A subscription's charge items."""
    response = client.get(f"/v1/subscriptions/{sub_id}/charges")
    assert response.status_code == 200, response.text
    return list(response.json()["items"])


def post(client: httpx.Client, sub_id: str, action: str, body: Any = None) -> httpx.Response:
    """POST an action with ``{}`` (or the given body)."""
    return client.post(f"/v1/subscriptions/{sub_id}/{action}", json={} if body is None else body)


def advance(client: httpx.Client, seconds: float) -> datetime:
    """Advance the business clock; returns the new business time."""
    response = client.post("/sandbox/clock/advance", json={"seconds": int(seconds)})
    assert response.status_code == 200, response.text
    return parse(response.json()["businessTime"])


def tick(client: httpx.Client) -> None:
    """One reconciler pass."""
    assert client.post("/sandbox/reconciler/tick", json={}).status_code == 200


def now(client: httpx.Client) -> datetime:
    """The merchant's business time."""
    return parse(client.get("/sandbox/fixtures").json()["businessTime"])


def advance_to(client: httpx.Client, moment: datetime) -> datetime:
    """Advance the business clock to ``moment`` (to the second)."""
    seconds = (moment - now(client)).total_seconds()
    assert seconds >= 0
    return advance(client, seconds + 1)


def parse(text: str) -> datetime:
    """A ``Z`` timestamp."""
    return datetime.fromisoformat(text.replace("Z", "+00:00")).astimezone(UTC)


def sub_events(client: httpx.Client, sub_id: str) -> list[str]:
    """The types of a subscription's events, oldest first."""
    items = client.get("/sandbox/events").json()["items"]
    return [
        e["type"]
        for e in items
        if e["type"].startswith("subscription.") and e["data"]["subscriptionId"] == sub_id
    ]
