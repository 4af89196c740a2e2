"""The hosted pages over plain HTTP (no browser): HTML answers, refusals, card numbers kept out.

The browser tests (tests/browser) drive the same pages in Chromium; these run
everywhere, on each storage backend, and check what a browser would not show.
"""

from __future__ import annotations

import threading
import uuid
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx2
import pytest

from tests.sandbox.bodies import txn
from workbench.sandbox.cards import CHALLENGE_CODE

PAN = "4242424242424242"
RETURN = "https://merchant.example/return?order=7"


def _session(client: httpx2.Client, **extra: Any) -> dict[str, Any]:
    body = {"transactionId": txn(), "amount": 10_000, "currency": "TRY", "returnUrl": RETURN,
            **extra}  # fmt: skip
    response = client.post("/v1/payments/sessions", json=body)
    assert response.status_code == 201, response.text
    return {**response.json(), "_transactionId": body["transactionId"]}


def _form(number: str = PAN, **extra: str) -> dict[str, str]:
    return {"cardNumber": number, "expiry": "12/30", "cvc": "123", "holder": "Ayse", **extra}


def _query(response: httpx2.Response) -> dict[str, str]:
    assert response.status_code == 303, response.text
    return {k: v[0] for k, v in parse_qs(urlsplit(response.headers["location"]).query).items()}


def _html(response: httpx2.Response, status: int) -> str:
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("text/html")
    assert "Traceback" not in response.text
    return response.text


def test_page_shows_amount_in_lira_and_links_the_stylesheet(
    client: httpx2.Client, anon: httpx2.Client
) -> None:
    session = _session(client, amount=123_456, description="<b>Kitap</b>")
    text = _html(anon.get(session["checkoutUrl"]), 200)
    assert "1.234,56 TL" in text
    assert "&lt;b&gt;Kitap&lt;/b&gt;" in text
    assert '<label for="cardNumber">' in text
    assert anon.get("/checkout/static/checkout.css").headers["content-type"].startswith("text/css")


def test_card_payment_keeps_the_return_query_and_emits_no_card_number(
    client: httpx2.Client, anon: httpx2.Client
) -> None:
    session = _session(client)
    query = _query(anon.post(f"{session['checkoutUrl']}/pay", data=_form()))
    assert query["order"] == "7"
    assert query["outcome"] == "success"
    payment = client.get(f"/v1/payments/{query['paymentId']}").json()
    assert payment["status"] == "captured"
    assert payment["cardMask"] == "424242******4242"
    events = client.get("/sandbox/events").text
    assert PAN not in events


def test_invalid_form_is_shown_again_without_the_card_number(
    client: httpx2.Client, anon: httpx2.Client
) -> None:
    session = _session(client)
    text = _html(anon.post(f"{session['checkoutUrl']}/pay", data=_form(cvc="12")), 400)
    assert "security code" in text
    assert PAN not in text
    assert 'value="12/30"' in text
    bad_luhn = _html(
        anon.post(f"{session['checkoutUrl']}/pay", data=_form("4242424242424241")), 400
    )
    assert "not a valid card number" in bad_luhn
    assert "4242424242424241" not in bad_luhn
    # Nothing was charged: the session still takes a payment.
    assert _query(anon.post(f"{session['checkoutUrl']}/pay", data=_form()))["outcome"] == "success"


def test_debit_card_refuses_installments_and_the_page_says_why(
    client: httpx2.Client, anon: httpx2.Client
) -> None:
    session = _session(client, installmentEnabled=True)
    answer = anon.post(
        f"{session['checkoutUrl']}/pay", data=_form("5200828282828210", installments="6")
    )
    assert "debit cards take a single installment" in _html(answer, 400)
    answer = anon.post(f"{session['checkoutUrl']}/pay", data=_form(installments="13"))
    assert "Installments go from 1 to 12" in _html(answer, 400)


def test_declined_card_finishes_the_session_as_failed(
    client: httpx2.Client, anon: httpx2.Client
) -> None:
    session = _session(client)
    query = _query(anon.post(f"{session['checkoutUrl']}/pay", data=_form("4000000000000002")))
    assert query["outcome"] == "failed"
    assert query["errorCode"] == "SVC-PAY-3001"
    assert client.get(f"/v1/payments/{query['paymentId']}").json()["status"] == "declined"
    assert "already completed" in _html(anon.get(session["checkoutUrl"]), 410)


def test_challenge_round_trip_and_a_forged_pares(
    client: httpx2.Client, anon: httpx2.Client
) -> None:
    session = _session(client)
    acs = anon.post(f"{session['checkoutUrl']}/pay", data=_form("4000000000003220"))
    assert acs.status_code == 303
    acs_url = acs.headers["location"]
    assert "/sandbox/acs/" in acs_url
    payment_id = urlsplit(acs_url).path.rsplit("/", 1)[1]
    correlation = parse_qs(urlsplit(acs_url).query)["correlationId"][0]
    forged = anon.post(
        f"{session['checkoutUrl']}/3ds-callback",
        data={"pares": "e30.00", "correlationId": correlation},
    )
    assert "not a genuine ACS assertion" in _html(forged, 400)
    assert client.get(f"/v1/payments/{payment_id}").json()["status"] == "pending_3ds"
    # Paying again while the challenge is pending goes back to the same challenge.
    again = anon.post(f"{session['checkoutUrl']}/pay", data=_form("4000000000003220"))
    assert again.headers["location"] == acs_url
    page = anon.post(
        f"/sandbox/acs/{payment_id}/challenge",
        data={"correlationId": correlation, "code": CHALLENGE_CODE},
    )
    text = _html(page, 200)
    assert f'action="{session["checkoutUrl"]}/3ds-callback"' in text
    pares = text.split('name="pares" value="', 1)[1].split('"', 1)[0]
    back = {"pares": pares, "correlationId": correlation}
    first = _query(anon.post(f"{session['checkoutUrl']}/3ds-callback", data=back))
    second = _query(anon.post(f"{session['checkoutUrl']}/3ds-callback", data=back))
    assert first == second
    assert first["outcome"] == "success"
    assert client.get(f"/v1/payments/{payment_id}").json()["status"] == "captured"


def test_acs_form_without_a_checkout_shows_the_pares(
    client: httpx2.Client, anon: httpx2.Client
) -> None:
    charge = client.post(
        "/v1/payments/card",
        json={
            "transactionId": txn(),
            "amount": 5_000,
            "currency": "TRY",
            "cardToken": "tok_test_3ds_challenge",
        },
    ).json()
    page = anon.post(
        f"/sandbox/acs/{charge['paymentId']}/challenge",
        data={"correlationId": charge["correlationId"], "code": "999999"},
    )
    text = _html(page, 200)
    assert "Code not accepted" in text
    assert "3ds-callback" in text
    wrong = anon.post(f"/sandbox/acs/{charge['paymentId']}/challenge", data={"code": "1"})
    assert "No challenge here" in _html(wrong, 404)


def test_mode_mismatches_and_unknown_sessions_are_html(
    client: httpx2.Client, anon: httpx2.Client
) -> None:
    qr = _session(client, mode="qr")
    assert "not by card" in _html(anon.post(f"{qr['checkoutUrl']}/pay", data=_form()), 400)
    card = _session(client)
    assert "not in mode qr" in _html(anon.post(f"{card['checkoutUrl']}/qr"), 400)
    base = card["checkoutUrl"].rsplit("/", 1)[0]
    assert "Checkout not found" in _html(anon.get(f"{base}/{uuid.uuid4()}"), 404)
    assert "Checkout not found" in _html(anon.get(f"{base}/..%2Fetc"), 404)
    assert "Checkout not found" in _html(anon.post(f"{base}/not-a-session/pay", data={}), 404)
    huge = anon.post(f"{card['checkoutUrl']}/pay", content=b"a=" + b"x" * 10_000)
    assert "too large" in _html(huge, 400)


@pytest.mark.parametrize("action", ["pay", "qr", "3ds-callback"])
def test_reloading_a_form_address_goes_back_to_the_page_and_charges_nothing(
    client: httpx2.Client, anon: httpx2.Client, action: str
) -> None:
    session = _session(client)
    response = anon.get(f"{session['checkoutUrl']}/{action}")
    assert response.status_code == 303
    assert response.headers["location"] == session["checkoutUrl"]
    assert '<label for="cardNumber">' in _html(anon.get(session["checkoutUrl"]), 200)
    payments = client.get("/sandbox/events", params={"type": "payment.captured"}).json()["items"]
    assert session["_transactionId"] not in {e["data"]["transactionId"] for e in payments}


@pytest.mark.parametrize("mode", ["qr", "payment"])
def test_repeat_completion_answers_the_same_redirect(
    client: httpx2.Client, anon: httpx2.Client, mode: str
) -> None:
    session = _session(client, mode=mode)
    action, data = ("qr", None) if mode == "qr" else ("pay", _form())
    first = anon.post(f"{session['checkoutUrl']}/{action}", data=data)
    second = anon.post(f"{session['checkoutUrl']}/{action}", data=data)
    assert first.headers["location"] == second.headers["location"]
    tx = [e for e in client.get("/sandbox/events").json()["items"]
          if e["data"].get("paymentId") == _query(first)["paymentId"]]  # fmt: skip
    assert [e["type"] for e in tx].count("payment.captured") == 1


def test_concurrent_submits_charge_once(client: httpx2.Client) -> None:
    session = _session(client)
    url = f"{session['checkoutUrl']}/pay"
    barrier = threading.Barrier(6)
    answers: list[httpx2.Response] = []

    def submit() -> None:
        barrier.wait()
        answers.append(httpx2.post(url, data=_form(), timeout=30))

    threads = [threading.Thread(target=submit) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert [a.status_code for a in answers] == [303] * 6
    assert len({a.headers["location"] for a in answers}) == 1
    events = client.get("/sandbox/events").json()["items"]
    mine = [e["type"] for e in events if e["data"].get("transactionId") == session_tx(session)]
    assert mine.count("payment.captured") == 1
    assert mine.count("session.completed") == 1


def session_tx(session: dict[str, Any]) -> str:
    """The transactionId the session was created with (kept by `_session`)."""
    return str(session["_transactionId"])
