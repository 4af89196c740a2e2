"""``/docs`` in Chromium: "Try it out" signs each request in the browser, and it works.

The Authorize dialog takes the API key and the secret key; the page's script signs each
request with WebCrypto over the canonical string of `workbench.signing`, so a charge
executed from the page is accepted (201), and the secret key never leaves the page: not
in a request, not in the address, not in the browser's storage.
"""

from __future__ import annotations

import json
import uuid
from typing import Any
from urllib.parse import urlsplit

import pytest

from tests.browser.screenshots import Shots
from workbench import Client
from workbench.sandbox import SandboxServer
from workbench.signing import sign

pytestmark = pytest.mark.browser


def _authorize(page: Any, api_key: str, secret_key: str) -> None:
    page.get_by_role("button", name="Authorize").first.click()
    dialog = page.locator(".dialog-ux")
    assert "secret key" in dialog.inner_text()
    # The signing scheme's form (the admin token's, for the merchants routes, is beside it).
    form = dialog.locator("form").filter(has=page.locator("#auth-basic-username"))
    form.locator("#auth-basic-username").fill(api_key)
    secret = form.locator("input[type=password]")
    assert secret.get_attribute("type") == "password"
    secret.fill(secret_key)
    form.get_by_role("button", name="Apply credentials").click()
    dialog.get_by_role("button", name="Close").first.click()


def _execute(page: Any, operation_id: str, **fields: str) -> Any:
    """Try the operation out with ``fields`` (a parameter's name, or ``body``)."""
    operation = page.locator(f"#operations-Payments-{operation_id}")
    operation.locator(".opblock-summary").click()
    operation.get_by_role("button", name="Try it out").click()
    for name, value in fields.items():
        if name == "body":
            operation.locator("textarea.body-param__text").fill(value)
        else:
            operation.locator(f"tr[data-param-name='{name}'] input").fill(value)
    operation.get_by_role("button", name="Execute").click()
    status = operation.locator(".live-responses-table .response .response-col_status").first
    status.wait_for()
    return operation, status.inner_text()


def test_a_card_charge_tried_out_from_docs_is_signed_in_the_browser(
    page: Any, server: SandboxServer, client: Client, shot: Shots
) -> None:
    config = server.config
    sent: list[Any] = []
    page.on("request", lambda r: sent.append(r) if "/v1/" in r.url else None)
    page.set_viewport_size({"width": 1280, "height": 900})
    page.goto(server.base_url + "/docs")
    page.locator(".opblock").first.wait_for()
    _authorize(page, config.api_key, config.secret_key)
    body = json.dumps({"transactionId": f"order-{uuid.uuid4().hex[:16]}", "amount": 10_000,
                       "currency": "TRY", "cardToken": "tok_test_success"}, indent=2)  # fmt: skip
    operation, status = _execute(page, "chargeCard", body=body)
    shot(page, "docs-charge")
    assert status == "201", operation.locator(".live-responses-table").inner_text()

    (charge,) = sent
    headers = charge.headers
    assert "authorization" not in headers
    assert headers["x-api-key"] == config.api_key
    stamp = headers["x-timestamp"]
    assert stamp.endswith("Z")
    # The browser's signature is the one workbench.signing computes over the same bytes.
    assert headers["x-signature"] == sign(
        config.secret_key, stamp, "POST", "/v1/payments/card", charge.post_data_buffer
    )
    payment_id = json.loads(charge.response().text())["paymentId"]
    assert client.payments.retrieve(payment_id).status == "captured"

    # A route with an id in its path, signed over the path with the id in it.
    _, status = _execute(page, "getPayment", id=payment_id)
    assert status == "200"
    assert urlsplit(sent[-1].url).path == f"/v1/payments/{payment_id}"

    for request in sent:
        assert config.secret_key not in request.url
        assert config.secret_key not in json.dumps(request.headers)
        assert config.secret_key not in (request.post_data or "")
    assert config.secret_key not in page.url
    stored = page.evaluate(
        "JSON.stringify([Object.entries(localStorage), Object.entries(sessionStorage),"
        " document.cookie])"
    )
    assert config.secret_key not in stored
