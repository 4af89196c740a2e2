"""Fixtures: a real sandbox HTTP server per storage backend, and signed clients for it.

Every test talks HTTP to a `SandboxServer`. The suite runs on SQLite (a WAL file in a
temporary directory) and, when PostgreSQL answers on 127.0.0.1:5432, again on a
database of its own that is dropped afterwards.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.postgres import database_url
from workbench.config import DEFAULT_API_KEY, DEFAULT_SECRET_KEY
from workbench.sandbox import OTHER_API_KEY, OTHER_SECRET_KEY, SandboxConfig, SandboxServer
from workbench.signing import sign_request


class Signer(httpx.Auth):
    """Signs each request over its exact body bytes with `workbench.signing`."""

    requires_request_body = True

    def __init__(self, api_key: str, secret_key: str) -> None:
        self.api_key = api_key
        self.secret_key = secret_key

    def auth_flow(self, request: httpx.Request) -> Iterator[httpx.Request]:
        headers = sign_request(
            api_key=self.api_key,
            secret_key=self.secret_key,
            method=request.method,
            url=str(request.url),
            body=request.content,
        )
        request.headers.update(headers.as_dict())
        yield request


def signed_client(
    base_url: str,
    api_key: str = DEFAULT_API_KEY,
    secret_key: str = DEFAULT_SECRET_KEY,
    **kwargs: Any,
) -> httpx.Client:
    """An httpx client that signs every request."""
    return httpx.Client(base_url=base_url, auth=Signer(api_key, secret_key), timeout=30, **kwargs)


@pytest.fixture(scope="session", params=["sqlite", "postgres"])
def db_url(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    """One database per backend for the whole session."""
    with database_url(request.param, tmp_path_factory.mktemp("sandbox")) as url:
        yield url


@pytest.fixture(scope="session")
def server(db_url: str) -> Iterator[SandboxServer]:
    """The sandbox on a free port; the reconciler runs only when a test asks."""
    config = SandboxConfig(db_url=db_url, run_reconciler_in_background=False)
    with SandboxServer(config) as running:
        yield running


@pytest.fixture
def client(server: SandboxServer) -> Iterator[httpx.Client]:
    """A client signed with the demo merchant's keys."""
    with signed_client(server.base_url) as c:
        yield c


@pytest.fixture
def other_client(server: SandboxServer) -> Iterator[httpx.Client]:
    """A client signed with the second merchant's keys."""
    with signed_client(server.base_url, OTHER_API_KEY, OTHER_SECRET_KEY) as c:
        yield c


@pytest.fixture
def anon(server: SandboxServer) -> Iterator[httpx.Client]:
    """An unsigned client."""
    with httpx.Client(base_url=server.base_url, timeout=30) as c:
        yield c


def txn() -> str:
    """A fresh merchant transaction id."""
    return f"txn_{uuid.uuid4().hex}"


def charge_body(
    token: str = "tok_test_success",  # noqa: S107 - a test card token
    amount: int = 10_000,
    **extra: Any,
) -> dict[str, Any]:
    """A valid card charge body."""
    return {
        "transactionId": txn(),
        "amount": amount,
        "currency": "TRY",
        "cardToken": token,
        **extra,
    }


def assert_envelope(response: httpx.Response, status: int, code: str) -> dict[str, Any]:
    """The response is the error envelope with this status and code."""
    assert response.status_code == status, response.text
    body = response.json()
    assert set(body) == {"code", "message", "requestId"}, body
    assert body["code"] == code, body
    assert body["requestId"] == response.headers["X-Request-Id"]
    assert "Traceback" not in response.text
    return dict(body)
