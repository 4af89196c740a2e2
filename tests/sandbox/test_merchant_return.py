"""The demo merchant return page: a checkout's returnUrl lands on a page the sandbox serves."""

from __future__ import annotations

import uuid

import httpx2

from tests.sandbox.bodies import txn
from workbench.sandbox.merchant_return import RETURN_PATH


def _page(response: httpx2.Response) -> str:
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("text/html")
    assert "Traceback" not in response.text
    return response.text


def test_a_paid_checkout_lands_on_the_return_page_with_its_payment_id(
    client: httpx2.Client, anon: httpx2.Client
) -> None:
    body = {"transactionId": txn(), "amount": 10_000, "currency": "TRY",
            "returnUrl": f"{client.base_url}{RETURN_PATH}"}  # fmt: skip
    session = client.post("/v1/payments/sessions", json=body).json()
    form = {"cardNumber": "4242424242424242", "expiry": "12/30", "cvc": "123", "holder": "Ayse"}
    landed = anon.post(f"{session['checkoutUrl']}/pay", data=form, follow_redirects=True)
    text = _page(landed)
    assert landed.url.path == RETURN_PATH
    payment_id = landed.url.params["paymentId"]
    assert f'data-testid="payment-id"><code>{payment_id}</code>' in text
    assert 'data-testid="outcome"><code>success</code>' in text
    assert client.get(f"/v1/payments/{payment_id}").json()["status"] == "captured"


def test_the_page_needs_no_signature_and_shows_a_failure(anon: httpx2.Client) -> None:
    session_id = str(uuid.uuid4())
    query = {"outcome": "failed", "errorCode": "SVC-PAY-3001", "sessionId": session_id}
    text = _page(anon.get(RETURN_PATH, params=query))
    assert "did not go through" in text
    assert 'data-testid="error-code"><code>SVC-PAY-3001</code>' in text
    assert f"<code>{session_id}</code>" in text
    assert 'data-testid="payment-id"><em>not given</em>' in text


def test_unexpected_values_are_not_echoed(anon: httpx2.Client) -> None:
    query = {"outcome": "<script>x</script>", "paymentId": "pay_<b>", "errorCode": "x" * 5000}
    text = _page(anon.get(RETURN_PATH, params=query))
    assert "<script>x" not in text
    assert "pay_&lt;b&gt;" not in text
    assert "pay_<b>" not in text
    assert "x" * 100 not in text
    assert text.count("not a valid value") == 3
