"""The dashboard's writes on both backends: the one-time link, resend, the clock.

The folder's other tests share one SQLite sandbox; these run the writes once per
backend (PostgreSQL when it answers on 127.0.0.1:5432), on a database of their own.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import datetime, timedelta

import httpx2

from tests.sandbox.bodies import charge_under, txn
from tests.sandbox.clients import signed_client
from tests.sandbox.dashboard.pages import ENGLISH, form_token, new_merchant, signed_in_client
from tests.sandbox.dashboard.receiver import receiving
from workbench.sandbox import SandboxServer
from workbench.sandbox.dashboard.signin import issue_link


def test_link_resend_and_clock(sandbox_with: Callable[..., SandboxServer]) -> None:
    server = sandbox_with(public_rate_limit_per_second=0, webhook_allow_private=True)
    base = server.base_url
    with server.sandbox.db.write() as conn:
        token = issue_link(conn)
    with httpx2.Client(base_url=base, headers=ENGLISH) as browser:
        assert browser.get(f"/dashboard/sign-in/link?token={token}").status_code == 303
        assert "mrc_demo0001" in browser.get("/dashboard").text
        assert browser.get(f"/dashboard/sign-in/link?token={token}").status_code == 404

    merchant = new_merchant(base)
    with (
        receiving() as receiver,
        signed_client(base, merchant.api_key, merchant.secret_key) as api,
        signed_in_client(base, merchant) as page,
    ):
        api.put("/sandbox/webhook", json={"url": receiver.url})
        api.post("/v1/payments/card", json=charge_under(txn(), 10_000))
        api.post("/sandbox/reconciler/tick", json={})
        event_id = re.findall(r"/dashboard/events/(evt_\w+)", page.get("/dashboard/events").text)[0]
        shown = page.get(f"/dashboard/events/{event_id}")
        key = re.search(r'name="idempotency_key" value="([^"]+)"', shown.text)
        assert key is not None
        receiver.status = 200
        form = {"csrf": form_token(shown.text), "idempotency_key": key.group(1)}
        answer = page.post(f"/dashboard/events/{event_id}/resend", data=form)
        assert answer.headers["location"].endswith("?resent=2")
        assert page.post(f"/dashboard/events/{event_id}/resend", data=form).status_code == 303
        assert [attempt for _, attempt in receiver.received] == ["1", "2"]
        assert 'data-testid="delivery-state">delivered' in page.get(answer.headers["location"]).text

        clock = page.get("/dashboard/clock").text
        keys = re.findall(r'name="idempotency_key" value="([^"]+)"', clock)
        moved = page.post(
            "/dashboard/clock/advance",
            data={"csrf": form_token(clock), "idempotency_key": keys[1], "step": "day"},
        )
        assert moved.status_code == 200
        assert 'data-testid="moved"' in moved.text
        before, after = (_iso(text) for text in (clock, moved.text))
        assert timedelta(hours=23) < after - before < timedelta(hours=25)


def _iso(page: str) -> datetime:
    found = re.search(r'data-iso="([^"]+)"', page)
    assert found is not None
    return datetime.fromisoformat(found.group(1).replace("Z", "+00:00"))
