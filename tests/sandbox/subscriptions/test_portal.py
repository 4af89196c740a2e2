"""The buyer portal: the publicHash is the only key, and it opens only the public view."""

from __future__ import annotations

import base64

import httpx2
import sqlalchemy as sa

from tests.sandbox.envelope import assert_envelope
from tests.sandbox.subscriptions.api import AYSE, create, get
from workbench.sandbox import SandboxServer
from workbench.sandbox.sessions.tables import sessions as sessions_table

PUBLIC_FIELDS = {
    "publicHash",
    "merchantName",
    "status",
    "amountMinor",
    "currency",
    "intervalCount",
    "intervalUnit",
    "cardLast4",
    "cardBrand",
    "nextChargeAt",
}


def test_public_view_has_exactly_the_spec_fields_and_no_signature(
    client: httpx2.Client, anon: httpx2.Client
) -> None:
    sub = create(client, AYSE)
    response = anon.get(f"/v1/public/subscriptions/{sub['publicHash']}")
    assert response.status_code == 200
    view = response.json()
    assert set(view) == PUBLIC_FIELDS
    assert view["publicHash"] == sub["publicHash"]
    assert view["merchantName"] == "Demo Merchant"
    for key in ("cardLast4", "cardBrand", "amountMinor", "status", "nextChargeAt"):
        assert view[key] == sub[key]
    for secret in (sub["id"], sub["customerId"], sub["merchantId"], "tok_"):
        assert secret not in response.text


def test_public_hash_is_unguessable_and_shown_only_on_creation(client: httpx2.Client) -> None:
    subs = [create(client) for _ in range(3)]
    hashes = [s["publicHash"] for s in subs]
    assert len(set(hashes)) == 3
    for sub in subs:
        raw = base64.urlsafe_b64decode(sub["publicHash"] + "=" * (-len(sub["publicHash"]) % 4))
        assert len(raw) * 8 >= 128
        assert sub["id"].removeprefix("sub_") not in sub["publicHash"]
        assert "publicHash" not in get(client, sub["id"])
        listed = client.get("/v1/subscriptions").text
        assert sub["publicHash"] not in listed


def test_a_wrong_hash_is_404_and_a_hash_opens_only_its_own_subscription(
    client: httpx2.Client, anon: httpx2.Client
) -> None:
    mine, theirs = create(client), create(client, amountMinor=12_345)
    for wrong in (mine["publicHash"][:-1] + "x", mine["id"], "x" * 32, mine["publicHash"].upper()):
        if wrong == mine["publicHash"]:
            continue
        assert_envelope(anon.get(f"/v1/public/subscriptions/{wrong}"), 404, "SVC-GW-4004")
        assert_envelope(
            anon.post(f"/v1/public/subscriptions/{wrong}/cancel", json={}), 404, "SVC-GW-4004"
        )
        assert_envelope(
            anon.post(f"/v1/public/subscriptions/{wrong}/update-card-session", json={}),
            404,
            "SVC-GW-4004",
        )
    # Cancelling through one hash leaves the other subscription alone.
    anon.post(f"/v1/public/subscriptions/{mine['publicHash']}/cancel", json={"atPeriodEnd": False})
    assert get(client, mine["id"])["status"] == "cancelled"
    assert get(client, theirs["id"])["status"] == "active"
    assert (
        anon.get(f"/v1/public/subscriptions/{theirs['publicHash']}").json()["amountMinor"] == 12_345
    )


def test_update_card_session_is_card_update_only_bound_to_the_subscription(
    client: httpx2.Client, anon: httpx2.Client, server: SandboxServer
) -> None:
    sub = create(client)
    response = anon.post(f"/v1/public/subscriptions/{sub['publicHash']}/update-card-session")
    assert response.status_code == 201
    body = response.json()
    assert set(body) == {"sessionId", "checkoutUrl", "expiresAt"}
    assert body["checkoutUrl"].endswith(f"/checkout/{body['sessionId']}")
    with server.sandbox.db.read() as conn:
        row = conn.execute(
            sa.select(sessions_table).where(sessions_table.c.id == body["sessionId"])
        ).one()
    assert row.mode == "card_update_only"
    assert row.subscription_id == sub["id"]
    assert row.customer_id == sub["customerId"]
    assert row.status == "active"


def test_portal_rejects_unknown_fields_and_acts_only_on_live_subscriptions(
    client: httpx2.Client, anon: httpx2.Client
) -> None:
    sub = create(client)
    url = f"/v1/public/subscriptions/{sub['publicHash']}"
    body = assert_envelope(
        anon.post(f"{url}/cancel", json={"atPeriodEnd": "yes"}), 400, "SVC-VAL-4001"
    )
    assert "atPeriodEnd" in body["message"]
    assert_envelope(anon.post(f"{url}/update-card-session", json={"x": 1}), 400, "SVC-VAL-4001")
    assert anon.post(f"{url}/cancel", json={"atPeriodEnd": False}).status_code == 200
    assert_envelope(anon.post(f"{url}/cancel", json={}), 409, "SVC-SUB-4090")
    assert_envelope(anon.post(f"{url}/update-card-session", json={}), 409, "SVC-SUB-4090")
    assert anon.get(url).json()["status"] == "cancelled"
