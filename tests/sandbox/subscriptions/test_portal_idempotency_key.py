"""The buyer portal's POST routes honour Idempotency-Key.

Keyed on (public hash, endpoint, key): a retry under the same key answers the first
response verbatim (no second card-update session, no second cancel); the same key on
another subscription or another portal route is another request; the same key with
another payload is SVC-GW-2001. "The same payload" is the one comparison every
idempotency mechanism uses (tests/sandbox/test_same_payload_comparison.py).
"""

from __future__ import annotations

import uuid

import httpx2

from tests.sandbox.envelope import assert_envelope
from tests.sandbox.subscriptions.api import create

_PUB = "/v1/public/subscriptions"


def _key() -> dict[str, str]:
    return {"Idempotency-Key": str(uuid.uuid4())}


def test_update_card_session_retry_answers_the_same_session(
    client: httpx2.Client, anon: httpx2.Client
) -> None:
    public_hash = create(client)["publicHash"]
    key = _key()
    first = anon.post(f"{_PUB}/{public_hash}/update-card-session", json={}, headers=key)
    assert first.status_code == 201, first.text
    again = anon.post(f"{_PUB}/{public_hash}/update-card-session", json={}, headers=key)
    assert again.status_code == 201
    assert again.content == first.content
    assert again.headers["Idempotent-Replayed"] == "true"
    assert again.headers["X-Request-Id"] == first.headers["X-Request-Id"]
    # An empty body and ``{}`` are the same payload (the one comparison).
    empty = anon.post(f"{_PUB}/{public_hash}/update-card-session", headers=key)
    assert empty.content == first.content
    # Without a key, each call is a new session, as before.
    other = anon.post(f"{_PUB}/{public_hash}/update-card-session", json={})
    assert other.json()["sessionId"] != first.json()["sessionId"]


def test_the_key_is_scoped_to_the_public_hash_and_the_route(
    client: httpx2.Client, anon: httpx2.Client
) -> None:
    one, two = create(client)["publicHash"], create(client)["publicHash"]
    key = _key()
    a = anon.post(f"{_PUB}/{one}/update-card-session", json={}, headers=key)
    b = anon.post(f"{_PUB}/{two}/update-card-session", json={}, headers=key)
    assert a.status_code == b.status_code == 201
    assert a.json()["sessionId"] != b.json()["sessionId"]
    cancel = anon.post(f"{_PUB}/{one}/cancel", json={}, headers=key)
    assert cancel.status_code == 200, cancel.text
    assert cancel.json()["cancelAtPeriodEnd"] is True


def test_portal_cancel_retry_replays_instead_of_refusing(
    client: httpx2.Client, anon: httpx2.Client
) -> None:
    public_hash = create(client)["publicHash"]
    key = _key()
    first = anon.post(f"{_PUB}/{public_hash}/cancel", json={"atPeriodEnd": False}, headers=key)
    assert first.status_code == 200, first.text
    assert first.json()["status"] == "cancelled"
    again = anon.post(f"{_PUB}/{public_hash}/cancel", json={"atPeriodEnd": False}, headers=key)
    assert again.status_code == 200, again.text
    assert again.content == first.content
    assert again.headers["Idempotent-Replayed"] == "true"


def test_same_key_other_payload_is_a_conflict(client: httpx2.Client, anon: httpx2.Client) -> None:
    public_hash = create(client)["publicHash"]
    key = _key()
    first = anon.post(f"{_PUB}/{public_hash}/cancel", json={}, headers=key)
    assert first.status_code == 200, first.text
    # The default written out is the same payload (the one comparison) ...
    same = anon.post(f"{_PUB}/{public_hash}/cancel", json={"atPeriodEnd": True}, headers=key)
    assert same.content == first.content
    # ... another value is not.
    other = anon.post(f"{_PUB}/{public_hash}/cancel", json={"atPeriodEnd": False}, headers=key)
    assert_envelope(other, 409, "SVC-GW-2001")


def test_an_unknown_hash_is_404_with_or_without_a_key(anon: httpx2.Client) -> None:
    response = anon.post(f"{_PUB}/nope/update-card-session", json={}, headers=_key())
    assert_envelope(response, 404, "SVC-GW-4004")
