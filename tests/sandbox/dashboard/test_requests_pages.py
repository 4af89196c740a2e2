"""The Requests pages: the merchant's last API requests, each whole, another's never.

Over HTTP as a browser would (a signed-in session); the request log's writer is drained
before a page is read (`RequestLogWork.drain`), never waited for by sleeping.
"""

from __future__ import annotations

import hashlib
import html
import json
import re
import uuid

import httpx2

from tests.sandbox.bodies import charge_body
from tests.sandbox.clients import signed_client
from tests.sandbox.dashboard.pages import Merchant, new_merchant, signed_in_client
from workbench.sandbox import SandboxServer
from workbench.signing import format_timestamp, sign

#: A test card number (Luhn-valid), to be redacted wherever a request carries it.
CARD_NUMBER = "4242424242424242"


def _drain(server: SandboxServer) -> None:
    work = server.sandbox.request_log
    assert work is not None
    work.drain()


def _text(page: httpx2.Response) -> str:
    return html.unescape(page.text)


def test_the_list_shows_the_newest_first_and_filters_by_status_path_code_and_key(
    dashboard_server: SandboxServer, page: httpx2.Client, api: httpx2.Client
) -> None:
    key = str(uuid.uuid4())
    charged = api.post("/v1/payments/card", json=charge_body(), headers={"Idempotency-Key": key})
    missing = api.get("/v1/payments/pay_000000000000000000000000")
    listed = api.get("/sandbox/fixtures")
    assert (charged.status_code, missing.status_code, listed.status_code) == (201, 404, 200)
    ids = [r.headers["x-request-id"] for r in (charged, missing, listed)]
    _drain(dashboard_server)

    def shown(**query: str) -> list[str]:
        answer = page.get("/dashboard/requests", params=query)
        assert answer.status_code == 200, answer.text
        return re.findall(r'href="/dashboard/requests/([0-9a-f-]{36})"', answer.text)

    assert shown() == ids[::-1]
    assert shown(status="4xx") == [ids[1]]
    assert shown(status="2xx") == [ids[2], ids[0]]
    assert shown(path="/v1/payments") == [ids[1], ids[0]]
    assert shown(code=missing.json()["code"]) == [ids[1]]
    assert shown(key=key) == [ids[0]]
    assert shown(key="no such key") == []


def test_the_list_is_paged(
    dashboard_server: SandboxServer, page: httpx2.Client, api: httpx2.Client
) -> None:
    made = [api.get("/sandbox/fixtures").headers["x-request-id"] for _ in range(53)]
    _drain(dashboard_server)
    first = page.get("/dashboard/requests")
    on_first = re.findall(r'href="/dashboard/requests/([0-9a-f-]{36})"', first.text)
    assert on_first == made[::-1][:50]
    older = re.search(r'href="(/dashboard/requests\?before=\d+)" data-testid="older"', first.text)
    assert older is not None
    second = page.get(html.unescape(older.group(1)))
    assert re.findall(r'href="/dashboard/requests/([0-9a-f-]{36})"', second.text) == made[::-1][50:]
    assert 'data-testid="older"' not in second.text


def test_a_requests_page_shows_its_headers_and_both_bodies_redacted(
    dashboard_server: SandboxServer, page: httpx2.Client, api: httpx2.Client, merchant: Merchant
) -> None:
    card = {"cardNumber": CARD_NUMBER, "expiryMonth": 12, "expiryYear": 2030, "cvc": "987",
            "cardholderName": "Ayşe Yılmaz"}  # fmt: skip
    token = api.post("/v1/cards/tokens", json=card)
    assert token.status_code == 201, token.text
    _drain(dashboard_server)
    shown = page.get(f"/dashboard/requests/{token.headers['x-request-id']}")
    assert shown.status_code == 200
    text = _text(shown)
    assert "POST" in text
    assert "/v1/cards/tokens" in text
    assert f"<code>x-api-key</code></dt><dd><code>{merchant.api_key}</code>" in shown.text
    signature = token.request.headers["x-signature"]
    assert f"<code>{signature[:8]}…</code>" in text
    assert '"cardholderName": "Ayşe Yılmaz"' in text  # the request body
    assert f'"token": "{token.json()["token"]}"' in text  # the response body
    assert '"cvc": "[redacted]"' in text
    # The CVC as the body held it: "987" alone also turns up in random hex ids.
    for secret in (CARD_NUMBER, '"cvc": "987"', signature, merchant.secret_key):
        assert secret not in text


def test_another_merchants_request_is_404_as_a_missing_one(
    dashboard_server: SandboxServer, page: httpx2.Client
) -> None:
    other = new_merchant(dashboard_server.base_url, "someone else")
    body = charge_body()
    with signed_client(dashboard_server.base_url, other.api_key, other.secret_key) as theirs:
        their_id = theirs.post("/v1/payments/card", json=body).headers["x-request-id"]
    _drain(dashboard_server)
    with signed_in_client(dashboard_server.base_url, other) as owner:
        assert owner.get(f"/dashboard/requests/{their_id}").status_code == 200
    for target in (their_id, str(uuid.uuid4())):
        answer = page.get(f"/dashboard/requests/{target}")
        assert answer.status_code == 404
        assert 'data-testid="not-found"' in answer.text
        # The address is echoed (the language links), nothing of the request is.
        assert "/v1/payments/card" not in answer.text
        assert body["transactionId"] not in answer.text
    assert their_id not in page.get("/dashboard/requests").text


def test_a_signature_refusal_shows_the_canonical_string_and_the_likely_mistake(
    dashboard_server: SandboxServer, page: httpx2.Client, merchant: Merchant
) -> None:
    body = json.dumps(charge_body()).encode()
    timestamp = format_timestamp()
    # Signed with the public key as the HMAC key: a mistake `workbench sign --expect` names.
    signature = sign(merchant.api_key, timestamp, "POST", "/v1/payments/card", body)
    sent = httpx2.post(
        f"{dashboard_server.base_url}/v1/payments/card",
        content=body,
        headers={"X-Api-Key": merchant.api_key, "X-Timestamp": timestamp,
                 "X-Signature": signature, "Content-Type": "application/json"},
    )  # fmt: skip
    assert sent.json()["code"] == "SVC-GW-1002"
    _drain(dashboard_server)
    shown = page.get(f"/dashboard/requests/{sent.headers['x-request-id']}")
    assert shown.status_code == 200
    text = _text(shown)
    digest = hashlib.sha256(body).hexdigest()
    canonical = re.search(r'data-testid="canonical">(.*?)</pre>', text, re.DOTALL)
    assert canonical is not None
    assert canonical.group(1) == f"{timestamp}\nPOST\n/v1/payments/card\n{digest}"
    mistakes = re.findall(r'data-testid="mistake"><strong>([\w-]+)</strong>', text)
    assert mistakes == ["public-key-as-secret"]
    assert "use the secret key (sk_) as the HMAC key" in text
    assert signature not in text
    assert merchant.secret_key not in text
