"""A captured signed request replayed: refunded each time by default, once in strict mode.

The spec's scheme has no nonce and does not sign ``Idempotency-Key``, so a copy of a
signed refund with a key of the attacker's choosing verifies again for five minutes.
The default sandbox keeps that (it is the service's design); ``strict_replay`` refuses
a signature it has already accepted, across processes, because it is kept in the
database. Two `SandboxServer` apps on one database stand in for two ``--workers``.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import httpx2
import pytest
import sqlalchemy as sa

from tests.sandbox.bodies import charge_body
from tests.sandbox.clients import signed_client
from tests.sandbox.envelope import assert_envelope
from workbench.config import DEFAULT_API_KEY, DEFAULT_SECRET_KEY
from workbench.sandbox import SandboxServer
from workbench.sandbox.accepted_signatures import ReplayPurgeWork, accepted_signatures
from workbench.sandbox.refunds.tables import refunds as refunds_table
from workbench.signing import sign_request

_COPIES = 5
_REFUND = 1_000


def _servers(sandbox_with: Callable[..., SandboxServer], strict: bool) -> list[SandboxServer]:
    """Two sandboxes on one database, as two ``--workers`` processes would be."""
    return [sandbox_with(strict_replay=strict) for _ in range(2)]


def _captured_payment(base_url: str) -> str:
    with signed_client(base_url) as client:
        response = client.post("/v1/payments/card", json=charge_body(amount=10_000))
        assert response.status_code == 201, response.text
        return str(response.json()["paymentId"])


def _replay_refund(servers: list[SandboxServer], payment_id: str) -> list[httpx2.Response]:
    """Sign one refund, then send five byte-identical copies, each with its own key."""
    path = f"/v1/payments/{payment_id}/refund"
    body = b'{"amount": %d}' % _REFUND
    signed = sign_request(
        api_key=DEFAULT_API_KEY,
        secret_key=DEFAULT_SECRET_KEY,
        method="POST",
        url=servers[0].base_url + path,
        body=body,
    ).as_dict()

    def send(copy: int) -> httpx2.Response:
        headers = {**signed, "Content-Type": "application/json"}
        headers["Idempotency-Key"] = str(uuid.uuid4())  # not signed: the attacker picks it
        url = servers[copy % len(servers)].base_url + path
        return httpx2.post(url, content=body, headers=headers, timeout=30)

    with ThreadPoolExecutor(_COPIES) as pool:
        return list(pool.map(send, range(_COPIES)))


def _refund_rows(db_url: str, payment_id: str) -> int:
    engine = sa.create_engine(db_url)
    try:
        with engine.connect() as conn:
            count = conn.execute(
                sa.select(sa.func.count())
                .select_from(refunds_table)
                .where(refunds_table.c.payment_id == payment_id)
            ).scalar_one()
    finally:
        engine.dispose()
    return int(count)


def test_default_mode_refunds_every_copy_as_the_spec_allows(
    sandbox_with: Callable[..., SandboxServer],
) -> None:
    servers = _servers(sandbox_with, strict=False)
    payment_id = _captured_payment(servers[0].base_url)
    responses = _replay_refund(servers, payment_id)
    assert [r.status_code for r in responses] == [200] * _COPIES, [r.text for r in responses]
    with signed_client(servers[1].base_url) as client:
        payment = client.get(f"/v1/payments/{payment_id}").json()
    assert payment["refundAmount"] == _COPIES * _REFUND
    assert _refund_rows(servers[0].config.db_url, payment_id) == _COPIES


def test_strict_mode_refunds_once_and_refuses_the_other_copies(
    sandbox_with: Callable[..., SandboxServer],
) -> None:
    servers = _servers(sandbox_with, strict=True)
    payment_id = _captured_payment(servers[0].base_url)
    responses = _replay_refund(servers, payment_id)
    accepted = [r for r in responses if r.status_code == 200]
    refused = [r for r in responses if r.status_code != 200]
    assert len(accepted) == 1, [r.text for r in responses]
    assert len(refused) == _COPIES - 1
    for response in refused:
        body = assert_envelope(response, 401, "SVC-GW-1005")
        assert "already accepted" in body["message"]
    with signed_client(servers[1].base_url) as client:
        payment = client.get(f"/v1/payments/{payment_id}").json()
        # Freshly signed requests still work, reads included (each signs anew).
        again = client.post(f"/v1/payments/{payment_id}/refund", json={"amount": 500})
        assert again.status_code == 200, again.text
    assert payment["refundAmount"] == _REFUND
    assert _refund_rows(servers[0].config.db_url, payment_id) == 2


def test_strict_mode_lets_identical_reads_repeat(
    sandbox_with: Callable[..., SandboxServer],
) -> None:
    (server, _) = _servers(sandbox_with, strict=True)
    payment_id = _captured_payment(server.base_url)
    path = f"/v1/payments/{payment_id}"
    signed = sign_request(
        api_key=DEFAULT_API_KEY,
        secret_key=DEFAULT_SECRET_KEY,
        method="GET",
        url=server.base_url + path,
        body=b"",
    ).as_dict()
    statuses = [
        httpx2.get(server.base_url + path, headers=signed, timeout=30).status_code for _ in range(3)
    ]
    assert statuses == [200, 200, 200]


def test_reconciler_forgets_signatures_whose_window_closed(
    sandbox_with: Callable[..., SandboxServer],
) -> None:
    (server, _) = _servers(sandbox_with, strict=True)
    assert any(isinstance(w, ReplayPurgeWork) for w in server.sandbox.reconciler.work)
    payment_id = _captured_payment(server.base_url)
    db = server.sandbox.db
    with db.read() as conn:
        rows = conn.execute(sa.select(accepted_signatures)).all()
    assert len(rows) == 1  # the charge's signature: a hash, never the signature
    assert len(rows[0].digest) == 64
    with db.write() as conn:
        conn.execute(
            sa.update(accepted_signatures).values(expires_at=rows[0].expires_at.replace(year=2000))
        )
    server.sandbox.tick()
    with db.read() as conn:
        left = conn.execute(sa.select(sa.func.count()).select_from(accepted_signatures))
        assert left.scalar_one() == 0
    assert payment_id


def test_workers_read_strict_replay_from_the_command(monkeypatch: pytest.MonkeyPatch) -> None:
    from workbench.cli import sandbox as command

    monkeypatch.setenv(command.ENV_DB, "sqlite:///unused.db")
    monkeypatch.setenv(command.ENV_STRICT_REPLAY, "1")
    assert command.config_from_environment().strict_replay is True
    monkeypatch.setenv(command.ENV_STRICT_REPLAY, "0")
    assert command.config_from_environment().strict_replay is False
