"""Webhook targets: the demo keys must not make a team host a port scanner.

Link-local and unspecified addresses are refused with 400 naming the rule, private ranges
unless the operator allows them, other spellings of an address are read as that address,
the check is made again at delivery after the name is resolved, and on a team host a
failed attempt does not say whether a port was closed, open or not HTTP.
"""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Callable, Iterator
from typing import Any

import httpx2
import pytest
import sqlalchemy as sa
from click.testing import CliRunner

from tests.sandbox.bodies import charge_body
from tests.sandbox.clients import signed_client
from tests.sandbox.envelope import assert_envelope
from workbench.cli import main
from workbench.sandbox import SandboxConfig, SandboxServer, tables

Start = Callable[..., httpx2.Client]
#: The servers `start` started, by the client it returned (a test reaching the database).
SERVERS: dict[int, SandboxServer] = {}


@pytest.fixture
def start(sandbox_with: Callable[..., SandboxServer]) -> Iterator[Start]:
    """Start a sandbox with the given settings on this backend; returns a signed client."""
    with contextlib.ExitStack() as stack:

        def _start(**settings: Any) -> httpx2.Client:
            server = sandbox_with(**settings)
            client = stack.enter_context(signed_client(server.base_url))
            SERVERS[id(client)] = server
            stack.callback(SERVERS.pop, id(client))
            return client

        yield _start


def _session(url: str) -> dict[str, Any]:
    return {
        "transactionId": f"tx_targets_{abs(hash(url))}",
        "amount": 1000,
        "currency": "TRY",
        "returnUrl": "https://shop.example/return",
        "callbackUrl": url,
    }


def _stored_webhook(client: httpx2.Client) -> str | None:
    stores = client.get("/sandbox/fixtures").json()["stores"]
    url: str | None = stores[0]["webhookUrl"]
    return url


REFUSED = [
    ("http://169.254.169.254/latest/meta-data", "link-local"),
    ("http://[fe80::1]:8080/hook", "link-local"),
    ("http://[::ffff:169.254.169.254]/hook", "link-local"),  # an IPv4 address inside IPv6
    ("http://2852039166/hook", "link-local"),  # 169.254.169.254 as one decimal number
    ("http://0.0.0.0:8080/hook", "unspecified"),
    ("http://0/hook", "unspecified"),
    ("http://[::]:8080/hook", "unspecified"),
    ("http://10.1.2.3/hook", "private"),
    ("http://0xc0.0xa8.1.1/hook", "private"),  # 192.168.1.1 in hexadecimal parts
    ("http://[fd00::1]/hook", "private"),
]


def test_a_refused_address_is_400_naming_the_rule(start: Start) -> None:
    client = start()
    before = _stored_webhook(client)
    for url, rule in REFUSED:
        put = client.put("/sandbox/webhook", json={"url": url})
        created = client.post("/v1/payments/sessions", json=_session(url))
        for response, field in ((put, "url"), (created, "callbackUrl")):
            body = assert_envelope(response, 400, "SVC-VAL-4001")
            assert body["message"].startswith(f"{field}: "), (url, body)
            assert rule in body["message"], (url, body)
    assert _stored_webhook(client) == before  # nothing half-written


def test_private_ranges_only_when_the_operator_allows_them(start: Start) -> None:
    strict = start()
    assert strict.put("/sandbox/webhook", json={"url": "http://192.168.7.7/h"}).status_code == 400
    allowing = start(webhook_allow_private=True)
    for url in ("http://192.168.7.7/h", "http://10.0.0.1:9000/h", "http://[fd12::1]/h"):
        response = allowing.put("/sandbox/webhook", json={"url": url})
        assert response.status_code == 200, response.text
    # Allowing private ranges never opens link-local or unspecified ones.
    metadata = {"url": "http://169.254.169.254/"}
    assert allowing.put("/sandbox/webhook", json=metadata).status_code == 400
    assert allowing.put("/sandbox/webhook", json={"url": "http://0.0.0.0/"}).status_code == 400


NORMALISED = [
    ("http://2130706434:8080/hook", "http://127.0.0.2:8080/hook"),
    ("http://0x7f.1/hook", "http://127.0.0.1/hook"),
    ("http://017700000001/hook", "http://127.0.0.1/hook"),
    ("http://127.1:9/hook?x=1", "http://127.0.0.1:9/hook?x=1"),
    ("http://localhost:8080/hook", "http://localhost:8080/hook"),
    ("http://[::1]:8080/hook", "http://[::1]:8080/hook"),
    ("https://shop.example/hook", "https://shop.example/hook"),
]


def test_loopback_stays_allowed_and_other_spellings_are_kept_normalised(start: Start) -> None:
    client = start()
    for given, kept in NORMALISED:
        response = client.put("/sandbox/webhook", json={"url": given})
        assert response.status_code == 200, response.text
        assert response.json()["url"] == kept
        assert _stored_webhook(client) == kept


def _events(client: httpx2.Client) -> list[dict[str, Any]]:
    client.post("/sandbox/reconciler/tick")
    events: list[dict[str, Any]] = client.get("/sandbox/events").json()["items"]
    return events


def _deliver_one(client: httpx2.Client) -> list[str]:
    """Pay once; the errors of the first attempt to send its first event."""
    payment = client.post("/v1/payments/card", json=charge_body("tok_test_success"))
    assert payment.status_code == 201, payment.text
    pid = payment.json()["paymentId"]
    event = next(e for e in _events(client) if e["data"].get("paymentId") == pid)
    deliveries = client.get(f"/sandbox/events/{event['id']}/deliveries").json()
    return [str(a["error"]) for a in deliveries["attempts"]]


def test_the_check_is_made_again_at_delivery_after_resolution(
    start: Start, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A name the check at PUT time cannot judge: it resolves to the metadata address.
    real = socket.getaddrinfo

    def resolve(host: Any, *args: Any, **kwargs: Any) -> Any:
        if host == "metadata.workbench.test":
            return real("169.254.169.254", *args, **kwargs)
        return real(host, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", resolve)
    client = start()
    put = client.put("/sandbox/webhook", json={"url": "http://metadata.workbench.test/hook"})
    assert put.status_code == 200, put.text
    errors = _deliver_one(client)
    assert errors
    assert errors[0].startswith("target refused: 169.254.169.254 is a link-local"), errors


def test_a_target_stored_before_the_check_is_refused_at_delivery(start: Start) -> None:
    client = start()
    assert client.put("/sandbox/webhook", json={"url": "http://127.0.0.1:9/h"}).status_code == 200
    pay = client.post("/v1/payments/card", json=charge_body("tok_test_success"))
    assert pay.status_code == 201, pay.text
    # A database written by an earlier version may hold a refused address.
    with SERVERS[id(client)].sandbox.db.write() as conn:
        conn.execute(sa.update(tables.events).values(target_url="http://169.254.169.254/x"))
    pid = pay.json()["paymentId"]
    event = next(e for e in _events(client) if e["data"].get("paymentId") == pid)
    deliveries = client.get(f"/sandbox/events/{event['id']}/deliveries").json()
    errors = [str(a["error"]) for a in deliveries["attempts"]]
    assert errors
    assert errors[0].startswith("target refused: 169.254.169.254"), errors


@contextlib.contextmanager
def _ports() -> Iterator[dict[str, int]]:
    """A closed port, a port that accepts and hangs up, one that answers not-HTTP bytes."""
    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))
    closed_port = closed.getsockname()[1]
    closed.close()
    servers: list[socket.socket] = []
    stop = threading.Event()

    def serve(reply: bytes) -> int:
        listener = socket.socket()
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        listener.settimeout(0.2)
        servers.append(listener)

        def loop() -> None:
            while not stop.is_set():
                try:
                    conn, _ = listener.accept()
                except OSError:
                    continue
                with conn:
                    conn.sendall(reply)

        threading.Thread(target=loop, daemon=True).start()
        port: int = listener.getsockname()[1]
        return port

    try:
        yield {
            "closed": closed_port,
            "hangs up": serve(b""),
            "not http": serve(b"SSH-2.0-OpenSSH_9.6\r\n"),
        }
    finally:
        stop.set()
        for listener in servers:
            listener.close()


def test_on_a_team_host_a_failed_attempt_carries_no_port_detail(start: Start) -> None:
    team = start(public_base_url="http://sandbox.team.example:8765")
    local = start()
    with _ports() as ports:
        seen: dict[str, dict[str, str]] = {"team": {}, "local": {}}
        for name, client in (("team", team), ("local", local)):
            for kind, port in ports.items():
                url = f"http://127.0.0.1:{port}/hook"
                assert client.put("/sandbox/webhook", json={"url": url}).status_code == 200
                seen[name][kind] = _deliver_one(client)[0]
    assert set(seen["team"].values()) == {"no HTTP answer"}, seen
    # On a developer's own machine the reason stays, which is what tells them apart.
    assert len(set(seen["local"].values())) > 1, seen


@pytest.mark.parametrize("flag", [[], ["--allow-private-webhooks"]])
def test_the_operator_allows_private_ranges_with_a_sandbox_option(
    flag: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    configs: list[SandboxConfig] = []

    def run(app: Any, **_: Any) -> None:  # the server, which would serve forever
        configs.append(app.state.sandbox.config)
        app.state.sandbox.stop()

    monkeypatch.setattr("workbench.cli.sandbox.serve", run)
    result = CliRunner().invoke(main, ["sandbox", "--port", "0", "--db", "sqlite://", *flag])
    assert result.exit_code == 0, result.output
    assert configs[0].webhook_allow_private is bool(flag)
