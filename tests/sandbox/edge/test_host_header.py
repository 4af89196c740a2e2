"""The unsigned Host header never becomes a public address, and unknown hosts are refused."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest

from tests.sandbox.bodies import txn
from tests.sandbox.clients import signed_client
from tests.sandbox.envelope import assert_envelope
from workbench.sandbox import SandboxConfig, SandboxServer


def _session(client: httpx2.Client, **headers: str) -> httpx2.Response:
    body = {
        "transactionId": txn(),
        "amount": 10_000,
        "currency": "TRY",
        "returnUrl": "https://shop.example/back",
    }
    return client.post("/v1/payments/sessions", json=body, headers=headers)


def test_checkout_url_is_the_bound_address_whatever_the_host_header(
    client: httpx2.Client, server: SandboxServer
) -> None:
    # localhost is a loopback name, so served; its port is not the server's.
    created = _session(client, Host="localhost:1")
    assert created.status_code == 201, created.text
    assert created.json()["checkoutUrl"].startswith(server.base_url + "/checkout/")


def test_forwarded_headers_change_neither_the_scheme_nor_the_address(
    client: httpx2.Client, server: SandboxServer
) -> None:
    # uvicorn believes X-Forwarded-* from 127.0.0.1 unless told not to; they are unsigned.
    forwarded = {"X-Forwarded-Proto": "https", "X-Forwarded-For": "203.0.113.9"}
    created = _session(client, **forwarded)
    assert created.status_code == 201, created.text
    assert created.json()["checkoutUrl"].startswith(server.base_url + "/checkout/")


@pytest.mark.parametrize(
    "host", ["evil.example", "evil.example:8765", "127.0.0.1.evil.example", "[2001:db8::1]:80"]
)
def test_a_host_the_sandbox_does_not_serve_is_refused(client: httpx2.Client, host: str) -> None:
    response = _session(client, Host=host)
    assert_envelope(response, 400, "SVC-GW-4000")
    assert "Host" in response.json()["message"]


def test_unsigned_pages_refuse_unknown_hosts_too(anon: httpx2.Client) -> None:
    assert_envelope(anon.get("/", headers={"Host": "evil.example"}), 400, "SVC-GW-4000")
    response = anon.get("/v1/payments/pay_x/public-status", headers={"Host": "evil.example"})
    assert_envelope(response, 400, "SVC-GW-4000")


@pytest.fixture
def public(tmp_path: Path) -> Iterator[SandboxServer]:
    config = SandboxConfig(
        db_url=f"sqlite:///{tmp_path / 'sandbox.db'}",
        run_reconciler_in_background=False,
        public_base_url="https://sandbox.team.example",
        allowed_hosts=("sandbox-alias.example",),
    )
    with SandboxServer(config) as running:
        yield running


def test_the_configured_public_url_is_used_and_served(public: SandboxServer) -> None:
    with signed_client(public.base_url) as client:
        created = _session(client, Host="sandbox.team.example")
        alias = _session(client, Host="sandbox-alias.example")
        other = _session(client, Host="evil.example")
    assert created.status_code == 201, created.text
    assert created.json()["checkoutUrl"].startswith("https://sandbox.team.example/checkout/")
    assert alias.json()["checkoutUrl"].startswith("https://sandbox.team.example/checkout/")
    assert_envelope(other, 400, "SVC-GW-4000")
