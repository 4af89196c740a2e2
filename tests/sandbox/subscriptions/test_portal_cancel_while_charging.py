"""What a buyer's cancel does while a charge runs.

The sandbox's choice (docs/sandbox/decisions.md): while a subscription is ``charging``
the cancel is refused, not queued: 409 SVC-SUB-4090 with ``Retry-After`` and a message
saying a charge is running; nothing changes, and once the charge has finished the same
cancel is accepted.
"""

from __future__ import annotations

import httpx2

from tests.paths import ROOT
from tests.sandbox.envelope import assert_envelope
from tests.sandbox.subscriptions.api import create, get, post
from tests.sandbox.subscriptions.clock import tick

_PUB = "/v1/public/subscriptions"
DECISIONS = ROOT / "docs/sandbox/decisions.md"


def _charging(client: httpx2.Client) -> dict[str, object]:
    sub = create(client)
    receipt = post(client, str(sub["id"]), "charge-now")
    assert receipt.status_code == 202, receipt.text
    assert get(client, str(sub["id"]))["status"] == "charging"
    return sub


def test_portal_cancel_while_charging_says_retry(
    client: httpx2.Client, anon: httpx2.Client
) -> None:
    sub = _charging(client)
    before = get(client, str(sub["id"]))
    refused = anon.post(f"{_PUB}/{sub['publicHash']}/cancel", json={"atPeriodEnd": False})
    body = assert_envelope(refused, 409, "SVC-SUB-4090")
    assert refused.headers["Retry-After"] == "1"
    assert "charge is running" in body["message"]
    assert "retry" in body["message"]
    assert get(client, str(sub["id"])) == before  # nothing written

    tick(client)
    assert get(client, str(sub["id"]))["status"] == "active"
    accepted = anon.post(f"{_PUB}/{sub['publicHash']}/cancel", json={})
    assert accepted.status_code == 200, accepted.text
    assert accepted.json() == {
        "publicHash": sub["publicHash"],
        "status": "active",
        "cancelAtPeriodEnd": True,
    }


def test_merchant_cancel_while_charging_gets_the_same_answer(
    client: httpx2.Client,
) -> None:
    sub = _charging(client)
    refused = post(client, str(sub["id"]), "cancel", {"atPeriodEnd": True})
    assert "charge is running" in assert_envelope(refused, 409, "SVC-SUB-4090")["message"]
    assert refused.headers["Retry-After"] == "1"


def test_decisions_say_what_portal_cancel_does_while_charging() -> None:
    text = DECISIONS.read_text(encoding="utf-8")
    row = next(line for line in text.splitlines() if line.startswith("| portal cancel |"))
    assert "`charging`" in row
    assert "Retry-After" in row
    assert "the buyer can always leave" not in row
