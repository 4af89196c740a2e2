"""Every POST route the client sends an Idempotency-Key to honours it.

The card tokenisation and the sandbox's control routes too: the client retries a POST
after a 5xx, a 429 or a lost connection, and a retried clock advance must not move the
clock twice, nor a retried tokenisation make a second token.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from datetime import datetime

import httpx2
import sqlalchemy as sa

from tests.sandbox.bodies import charge_body
from tests.sandbox.envelope import assert_envelope
from workbench.sandbox import SandboxServer, tables

CARD = {"cardNumber": "4543600000000003", "expiryMonth": 12, "expiryYear": 2031, "cvc": "739"}


def _business_time(client: httpx2.Client) -> datetime:
    moved = client.post("/sandbox/clock/advance", json={"seconds": 0})
    return datetime.fromisoformat(moved.json()["businessTime"])


def test_a_retried_clock_advance_moves_the_clock_once(client: httpx2.Client) -> None:
    key = str(uuid.uuid4())
    before = _business_time(client)
    first = client.post(
        "/sandbox/clock/advance", json={"seconds": 3600}, headers={"Idempotency-Key": key}
    )
    again = client.post(
        "/sandbox/clock/advance", json={"seconds": 3600}, headers={"Idempotency-Key": key}
    )
    assert first.status_code == again.status_code == 200
    assert again.content == first.content
    assert again.headers["Idempotent-Replayed"] == "true"
    assert again.headers["X-Request-Id"] == first.headers["X-Request-Id"]
    moved = (_business_time(client) - before).total_seconds()
    assert 3600 <= moved < 3600 + 60  # once, not twice (give or take the wall clock)
    other = client.post(
        "/sandbox/clock/advance", json={"seconds": 60}, headers={"Idempotency-Key": key}
    )
    assert_envelope(other, 409, "SVC-GW-2001")


def test_control_posts_replay_and_a_refused_one_keeps_no_claim(client: httpx2.Client) -> None:
    for path, body in (
        ("/sandbox/reconciler/tick", {}),
        ("/sandbox/settle", {}),
        ("/sandbox/latency", {"milliseconds": 0}),
        ("/sandbox/rate-limit", {"perSecond": None, "burst": 1}),
    ):
        key = str(uuid.uuid4())
        first = client.post(path, json=body, headers={"Idempotency-Key": key})
        again = client.post(path, json=body, headers={"Idempotency-Key": key})
        assert first.status_code == 200, (path, first.text)
        assert again.headers.get("Idempotent-Replayed") == "true", path
        assert again.content == first.content, path
    key = str(uuid.uuid4())
    refused = client.post(
        "/sandbox/latency", json={"milliseconds": -1}, headers={"Idempotency-Key": key}
    )
    assert_envelope(refused, 400, "SVC-VAL-4001")
    fixed = client.post(
        "/sandbox/latency", json={"milliseconds": 0}, headers={"Idempotency-Key": key}
    )
    assert fixed.status_code == 200
    assert "Idempotent-Replayed" not in fixed.headers


def test_a_retried_tokenisation_answers_the_same_token(
    client: httpx2.Client, server: SandboxServer
) -> None:
    key = str(uuid.uuid4())
    first = client.post("/v1/cards/tokens", json=CARD, headers={"Idempotency-Key": key})
    again = client.post("/v1/cards/tokens", json=CARD, headers={"Idempotency-Key": key})
    assert first.status_code == 201, first.text
    assert again.status_code == 201
    assert again.json()["token"] == first.json()["token"]
    assert again.headers["Idempotent-Replayed"] == "true"
    other_card = {**CARD, "expiryYear": 2032}
    conflict = client.post("/v1/cards/tokens", json=other_card, headers={"Idempotency-Key": key})
    assert_envelope(conflict, 409, "SVC-GW-2001")
    # What the record keeps is no hash of the card number or of the body sent.
    with server.sandbox.db.read() as conn:
        kept = conn.execute(
            sa.select(tables.idempotency_records).where(tables.idempotency_records.c.key == key)
        ).one()
    stored = f"{kept.fingerprint} {bytes(kept.body).decode()}"
    assert CARD["cardNumber"] not in stored
    for text in (CARD["cardNumber"], json.dumps(CARD), json.dumps(CARD, separators=(",", ":"))):
        assert hashlib.sha256(text.encode()).hexdigest() not in stored


def test_a_retried_reset_replays_its_answer_and_deletes_nothing_more(
    other_client: httpx2.Client,
) -> None:
    """The reset deletes the merchant's Idempotency-Key records too: its own is written
    with its answer, after the deletion, so the retry replays instead of resetting again."""
    key = str(uuid.uuid4())
    first = other_client.post("/sandbox/reset", json={}, headers={"Idempotency-Key": key})
    assert first.status_code == 200, first.text
    made = other_client.post("/v1/payments/card", json=charge_body())
    assert made.status_code == 201, made.text
    again = other_client.post("/sandbox/reset", json={}, headers={"Idempotency-Key": key})
    assert again.status_code == 200
    assert again.headers.get("Idempotent-Replayed") == "true"
    assert again.content == first.content
    kept = other_client.get(f"/v1/payments/{made.json()['paymentId']}")
    assert kept.status_code == 200, kept.text
