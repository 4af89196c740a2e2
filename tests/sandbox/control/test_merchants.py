"""Merchants on demand: made, listed and deleted over HTTP, isolated from every other.

On both backends (the ``server`` fixture): a new merchant charges with its own keys,
sees only its own data and clock; listings show no secret; deletion removes its rows and
its keys stop working at once; the built-in merchants stay. A sandbox reachable beyond
loopback asks for the admin token.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

import httpx2
import pytest
import sqlalchemy as sa

from tests.sandbox.bodies import charge_body
from tests.sandbox.clients import signed_client
from tests.sandbox.envelope import assert_envelope
from workbench.sandbox import SandboxServer, tables
from workbench.sandbox.clock import wall_now
from workbench.sandbox.control.merchants import create_merchant
from workbench.sandbox.fixtures import DEMO_MERCHANT_ID, OTHER_MERCHANT_ID
from workbench.sandbox.reconciler import lease_name
from workbench.sandbox.sealing import Sealer, new_key


def _create(server: SandboxServer, **body: Any) -> dict[str, Any]:
    answer = httpx2.post(f"{server.base_url}/sandbox/merchants", json=body or None)
    assert answer.status_code == 201, answer.text
    assert answer.headers["cache-control"] == "no-store"
    made: dict[str, Any] = answer.json()
    return made


def test_a_new_merchant_charges_with_its_own_keys_and_sees_only_its_own_data(
    server: SandboxServer, client: httpx2.Client
) -> None:
    made = _create(server, name="Ayşe's scratch")
    assert made["name"] == "Ayşe's scratch"
    assert made["merchantId"].startswith("mrc_")
    assert made["storeId"].startswith("sto_")
    assert made["secretKey"].startswith("sk_test_")
    assert made["webhookSecret"].startswith("whsec_")
    demo_payment = client.post("/v1/payments/card", json=charge_body()).json()["paymentId"]
    with signed_client(server.base_url, made["apiKey"], made["secretKey"]) as own:
        fixtures = own.get("/sandbox/fixtures").json()
        assert fixtures["merchantId"] == made["merchantId"]
        assert fixtures["stores"][0]["webhookSecret"] == made["webhookSecret"]
        customers = {c["id"]: c for c in fixtures["customers"]}
        assert set(customers) == set(made["customers"])
        assert all(c["savedCards"] for c in customers.values())
        charged = own.post("/v1/payments/card", json=charge_body())
        assert charged.status_code == 201, charged.text
        assert own.get(f"/v1/payments/{demo_payment}").status_code == 404
        moved = own.post("/sandbox/clock/advance", json={"seconds": 86_400}).json()
        own.post("/sandbox/reset").raise_for_status()
    demo_time = client.get("/sandbox/fixtures").json()["businessTime"]
    assert client.get(f"/v1/payments/{demo_payment}").status_code == 200
    ahead = _moment(moved["businessTime"]) - _moment(demo_time)
    assert ahead > timedelta(hours=23)  # the demo merchant's clock did not move
    # ... and the demo merchant does not see the new one's payment.
    assert client.get(f"/v1/payments/{charged.json()['paymentId']}").status_code == 404


def _moment(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def test_a_listing_shows_every_merchant_and_no_secret(server: SandboxServer) -> None:
    made = _create(server)
    answer = httpx2.get(f"{server.base_url}/sandbox/merchants")
    assert answer.status_code == 200
    items = {m["merchantId"]: m for m in answer.json()["items"]}
    assert {DEMO_MERCHANT_ID, OTHER_MERCHANT_ID, made["merchantId"]} <= set(items)
    assert items[DEMO_MERCHANT_ID]["builtIn"] is True
    mine = items[made["merchantId"]]
    assert mine == {
        "merchantId": made["merchantId"],
        "name": "Scratch merchant",
        "builtIn": False,
        "created": made["created"],
        "lastUsed": None,
    }
    assert made["secretKey"] not in answer.text
    assert made["webhookSecret"] not in answer.text
    with signed_client(server.base_url, made["apiKey"], made["secretKey"]) as own:
        own.post("/v1/payments/card", json=charge_body()).raise_for_status()
    again = httpx2.get(f"{server.base_url}/sandbox/merchants").json()["items"]
    assert next(m for m in again if m["merchantId"] == made["merchantId"])["lastUsed"]


def test_secrets_are_sealed_in_the_database(server: SandboxServer) -> None:
    made = _create(server)
    db = server.sandbox.db
    with db.read() as conn:
        keys = conn.execute(sa.select(tables.api_keys.c.secret_key)).scalars().all()
        hooks = conn.execute(sa.select(tables.stores.c.webhook_secret)).scalars().all()
    assert all(k.startswith("wbs1:") for k in keys)
    assert all(h.startswith("wbs1:") for h in hooks)
    stored = " ".join([*keys, *hooks])
    assert made["secretKey"] not in stored
    assert made["webhookSecret"] not in stored
    assert server.config.secret_key not in stored
    assert "whsec_test_wb_demo_0001" not in stored


def test_deleting_removes_every_row_and_the_keys_stop_working(server: SandboxServer) -> None:
    made = _create(server)
    merchant = made["merchantId"]
    with signed_client(server.base_url, made["apiKey"], made["secretKey"]) as own:
        own.post("/v1/payments/card", json=charge_body()).raise_for_status()
        own.post("/v1/payments/card", json=charge_body(capture=False)).raise_for_status()
        gone = own.delete(f"/sandbox/merchants/{merchant}")
        assert gone.status_code == 200, gone.text
        assert gone.json()["deleted"]["payments"] == 2
        refused = own.post("/v1/payments/card", json=charge_body())
        assert refused.status_code == 401
        assert refused.json()["code"] == "SVC-GW-1003"
    with server.sandbox.db.read() as conn:
        for table in server.sandbox.tables:
            if "merchant_id" in table.c:
                left = conn.execute(
                    sa.select(sa.func.count()).where(table.c.merchant_id == merchant)
                ).scalar_one()
                assert left == 0, table.name
    again = httpx2.delete(f"{server.base_url}/sandbox/merchants/{merchant}")
    assert_envelope(again, 404, "SVC-GW-4004")


def test_another_merchants_key_cannot_delete_but_loopback_may_without_one(
    server: SandboxServer, other_client: httpx2.Client
) -> None:
    made = _create(server)
    refused = other_client.delete(f"/sandbox/merchants/{made['merchantId']}")
    assert refused.status_code == 200  # on loopback anyone may, the second merchant too
    other = _create(server)
    unsigned = httpx2.delete(f"{server.base_url}/sandbox/merchants/{other['merchantId']}")
    assert unsigned.status_code == 200


@pytest.mark.parametrize("merchant", [DEMO_MERCHANT_ID, OTHER_MERCHANT_ID])
def test_a_built_in_merchant_cannot_be_deleted(server: SandboxServer, merchant: str) -> None:
    answer = httpx2.delete(f"{server.base_url}/sandbox/merchants/{merchant}")
    assert_envelope(answer, 409, "SVC-GW-4090")


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"name": "x" * 101}, "name"),
        ({"name": "tab\there"}, "name"),
        ({"name": "\u0085next line"}, "name"),
        ({"name": ""}, "name"),
        ({"name": 5}, "name"),
        ({"nmae": "typo"}, "nmae"),
    ],
)
def test_a_bad_name_is_refused_naming_the_field(
    server: SandboxServer, body: dict[str, Any], field: str
) -> None:
    with server.sandbox.db.read() as conn:
        before = conn.execute(sa.select(sa.func.count()).select_from(tables.merchants)).scalar()
    answer = httpx2.post(f"{server.base_url}/sandbox/merchants", json=body)
    assert_envelope(answer, 400, "SVC-VAL-4001")
    assert field in answer.json()["message"]
    with server.sandbox.db.read() as conn:
        after = conn.execute(sa.select(sa.func.count()).select_from(tables.merchants)).scalar()
    assert after == before


def test_a_hundred_character_name_is_taken(server: SandboxServer) -> None:
    assert _create(server, name="ğ" * 100)["name"] == "ğ" * 100


def test_an_unknown_merchant_is_404(server: SandboxServer) -> None:
    answer = httpx2.delete(f"{server.base_url}/sandbox/merchants/mrc_nosuch")
    assert_envelope(answer, 404, "SVC-GW-4004")


# --- beyond loopback: the admin token -------------------------------------------------


def test_beyond_loopback_the_admin_token_is_needed(
    sandbox_with: Callable[..., SandboxServer],
) -> None:
    token = "wbadm_test_token_for_this_test"
    server = sandbox_with(listen_host="0.0.0.0", admin_token=token)  # noqa: S104
    base = server.base_url
    bearer = {"Authorization": f"Bearer {token}"}
    assert_envelope(httpx2.post(f"{base}/sandbox/merchants"), 401, "SVC-GW-1006")
    wrong = {"Authorization": "Bearer wbadm_wrong"}
    assert_envelope(httpx2.post(f"{base}/sandbox/merchants", headers=wrong), 401, "SVC-GW-1006")
    assert_envelope(httpx2.get(f"{base}/sandbox/merchants"), 401, "SVC-GW-1006")
    made = httpx2.post(f"{base}/sandbox/merchants", headers=bearer)
    assert made.status_code == 201, made.text
    merchant = made.json()["merchantId"]
    assert httpx2.get(f"{base}/sandbox/merchants", headers=bearer).status_code == 200
    unsigned = httpx2.delete(f"{base}/sandbox/merchants/{merchant}")
    assert_envelope(unsigned, 401, "SVC-GW-1006")
    with signed_client(base) as demo:
        reset = demo.post("/sandbox/reset")
        assert_envelope(reset, 401, "SVC-GW-1006")
        assert demo.post("/sandbox/reset", headers=bearer).status_code == 200
        # Another merchant's key is no admin token.
        other = demo.delete(f"/sandbox/merchants/{merchant}")
        assert_envelope(other, 404, "SVC-GW-4004")
    own = made.json()
    with signed_client(base, own["apiKey"], own["secretKey"]) as client:
        assert client.post("/sandbox/reset").status_code == 200  # its own: no token needed
        assert client.delete(f"/sandbox/merchants/{merchant}").status_code == 200


def test_a_token_made_at_the_first_start_beyond_loopback_is_kept_as_a_hash(
    sandbox_with: Callable[..., SandboxServer],
) -> None:
    server = sandbox_with(listen_host="0.0.0.0")  # noqa: S104
    token = server.sandbox.new_admin_token
    assert token
    assert token.startswith("wbadm_")
    with server.sandbox.db.read() as conn:
        stored = conn.execute(sa.select(tables.meta.c.value)).scalars().all()
    assert token not in " ".join(stored)
    bearer = {"Authorization": f"Bearer {token}"}
    made = httpx2.post(f"{server.base_url}/sandbox/merchants", headers=bearer)
    assert made.status_code == 201
    server.stop()
    again = sandbox_with(listen_host="0.0.0.0")  # noqa: S104
    assert again.sandbox.new_admin_token is None  # shown once, never made again
    listed = httpx2.get(f"{again.base_url}/sandbox/merchants", headers=bearer)
    assert listed.status_code == 200


def test_a_pass_over_every_merchant_visits_only_those_with_work_pending(
    server: SandboxServer,
) -> None:
    """Thousands of idle merchants (one per test run) cost the background loop nothing:
    no lease taken, no work run for them."""
    idle = [_create(server)["merchantId"] for _ in range(5)]
    busy = _create(server)
    with signed_client(server.base_url, busy["apiKey"], busy["secretKey"]) as own:
        own.post("/v1/payments/card", json=charge_body(capture=False)).raise_for_status()
    server.sandbox.tick()
    with server.sandbox.db.read() as conn:
        leased = set(conn.execute(sa.select(tables.leases.c.name)).scalars())
    assert lease_name(busy["merchantId"]) in leased
    assert not {lease_name(m) for m in idle} & leased


def test_making_merchants_is_counted_per_client_address(
    sandbox_with: Callable[..., SandboxServer],
) -> None:
    server = sandbox_with(public_rate_limit_per_second=0.01, public_rate_limit_burst=2)
    answers = [httpx2.post(f"{server.base_url}/sandbox/merchants") for _ in range(3)]
    assert [a.status_code for a in answers[:2]] == [201, 201]
    assert_envelope(answers[2], 429, "SVC-GW-1004")
    assert int(answers[2].headers["retry-after"]) >= 1


class _FailingSealer(Sealer):
    """Seals the first secret, then fails: a creation that breaks midway."""

    def __init__(self) -> None:
        super().__init__(new_key())
        self.sealed = 0

    def seal_text(self, secret: str, context: str) -> str:
        self.sealed += 1
        if self.sealed > 1:
            raise RuntimeError("the second secret cannot be sealed")
        return super().seal_text(secret, context)


def test_a_creation_that_fails_midway_leaves_nothing(server: SandboxServer) -> None:
    db = server.sandbox.db

    def counts() -> dict[str, int]:
        with db.read() as conn:
            return {
                t.name: conn.execute(sa.select(sa.func.count()).select_from(t)).scalar_one()
                for t in (tables.merchants, tables.stores, tables.api_keys, tables.customers)
            }

    before = counts()
    with pytest.raises(RuntimeError, match="second secret"), db.write() as conn:
        create_merchant(conn, "half", _FailingSealer(), wall_now())
    assert counts() == before
