"""The dashboard's Requests pages in Chromium: a charge appears live, its page shows both
bodies, and a wrong signature's page shows the canonical string the sandbox built.

A merchant of the test's own signs in through the form; the charge is made by the
client (`workbench.Client`) while the list is open, and the test waits for the row to
appear (Playwright waits for the condition), never for a time.
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

import httpx2

from workbench import Client
from workbench.sandbox import SandboxServer
from workbench.signing import format_timestamp, sign


def _merchant(server: SandboxServer) -> dict[str, Any]:
    made = httpx2.post(f"{server.base_url}/sandbox/merchants", json={"name": "browser requests"})
    assert made.status_code == 201, made.text
    merchant: dict[str, Any] = made.json()
    return merchant


def _sign_in(page: Any, server: SandboxServer, merchant: dict[str, Any]) -> None:
    page.goto(f"{server.base_url}/dashboard/requests")  # to sign-in, then back here
    page.fill("#api_key", merchant["apiKey"])
    page.fill("#secret_key", merchant["secretKey"])
    page.click("button[type=submit]")
    page.wait_for_url(re.compile(r"/dashboard/requests$"))


def test_a_charge_appears_live_and_its_page_shows_both_bodies(
    page: Any, server: SandboxServer
) -> None:
    merchant = _merchant(server)
    _sign_in(page, server, merchant)
    assert page.locator("[data-testid=live-hint]").is_visible()
    assert page.locator("[data-testid=requests] tbody tr.empty").count() == 1
    with Client(merchant["apiKey"], merchant["secretKey"], server.base_url) as client:
        charge = client.payments.charge_card(
            transaction_id="order-live-1", amount=12_500, card_token="tok_test_success"
        )
    row = page.locator(f'[data-testid=requests] tbody tr a[href$="/{charge.request_id}"]')
    row.wait_for()  # pushed by the live stream: the page was not reloaded
    assert page.locator("[data-testid=requests] tbody tr.empty").count() == 0
    assert (
        "POST /v1/payments/card"
        in page.locator("[data-testid=requests] tbody tr").first.inner_text()
    )
    row.click()
    page.wait_for_url(re.compile(rf"/dashboard/requests/{charge.request_id}$"))
    sent = page.locator("[data-testid=request-body]").inner_text()
    answered = page.locator("[data-testid=response-body]").inner_text()
    assert json.loads(sent)["transactionId"] == "order-live-1"
    assert json.loads(answered)["paymentId"] == charge.payment_id
    assert merchant["secretKey"] not in page.content()


def test_a_wrong_signature_shows_the_canonical_string(page: Any, server: SandboxServer) -> None:
    merchant = _merchant(server)
    _sign_in(page, server, merchant)
    body = json.dumps({"transactionId": "order-wrong-sig", "amount": 5_000, "currency": "TRY",
                       "cardToken": "tok_test_success"}).encode()  # fmt: skip
    timestamp = format_timestamp()
    # The body hashed as compact JSON, the bytes sent with spaces: reserialised.
    compact = json.dumps(json.loads(body), separators=(",", ":")).encode()
    signature = sign(merchant["secretKey"], timestamp, "POST", "/v1/payments/card", compact)
    refused = httpx2.post(
        f"{server.base_url}/v1/payments/card",
        content=body,
        headers={"X-Api-Key": merchant["apiKey"], "X-Timestamp": timestamp,
                 "X-Signature": signature, "Content-Type": "application/json"},
    )  # fmt: skip
    assert refused.json()["code"] == "SVC-GW-1002"
    request_id = refused.headers["x-request-id"]
    page.locator(f'[data-testid=requests] tbody tr a[href$="/{request_id}"]').click()
    page.wait_for_url(re.compile(rf"/dashboard/requests/{request_id}$"))
    digest = hashlib.sha256(body).hexdigest()
    canonical = page.locator("[data-testid=canonical]").inner_text()
    assert canonical.splitlines() == [timestamp, "POST", "/v1/payments/card", digest]
    assert page.locator("[data-testid=body-sha256]").inner_text() == digest
    mistakes = page.locator("[data-testid=mistake]").all_inner_texts()
    assert any(m.startswith("body-reserialized") for m in mistakes), mistakes
    assert signature not in page.content()
