"""A session completes only with its own payment, and only while open.

Its own payment: a session on a ``transactionId`` that already belongs to a payment is refused at
creation (409 SVC-GW-2001 naming ``transactionId`` and the payment), so the hosted page
can never complete a 50 TL session with a 10 TL payment; should such a payment still be
found under the session (a charge that raced the creation), the hosted card and QR
flows refuse to complete the session with it.

While open: a card charge under the ``transactionId`` of an expired or completed session is
refused with SVC-SES-4090 and writes nothing; the very charge that paid the session still
answers that payment as it is now (the ``transactionId`` fence).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import httpx2
import pytest

from tests.rows import update_row
from tests.sandbox.bodies import charge_under, session_body, txn
from tests.sandbox.envelope import assert_envelope
from workbench import Client, IdempotencyConflictError, SessionStateError
from workbench.sandbox import SandboxServer
from workbench.sandbox.payments.tables import payments as payments_table
from workbench.sandbox.sessions.tables import sessions as sessions_table
from workbench.spec import limits

CARD = {"cardNumber": "4242424242424242", "expiry": "12/30", "cvc": "123", "holder": "Ayse"}


def _session(
    client: httpx2.Client, transaction_id: str, amount: int, **extra: Any
) -> httpx2.Response:
    return client.post("/v1/payments/sessions", json=session_body(transaction_id, amount, **extra))


def _open(client: httpx2.Client, transaction_id: str, amount: int, **extra: Any) -> Any:
    """A new session's body, its creation checked (201)."""
    response = _session(client, transaction_id, amount, **extra)
    assert response.status_code == 201, response.text
    return response.json()


def _payments_of(client: httpx2.Client, transaction_id: str) -> set[str]:
    items = client.get("/sandbox/events").json()["items"]
    return {
        e["data"]["paymentId"]
        for e in items
        if e["type"].startswith("payment.") and e["data"].get("transactionId") == transaction_id
    }


def test_a_session_on_a_paid_transaction_id_is_refused(client: httpx2.Client) -> None:
    transaction_id = txn()
    paid = client.post("/v1/payments/card", json=charge_under(transaction_id, 1_000))
    assert paid.status_code == 201, paid.text
    payment_id = paid.json()["paymentId"]

    response = _session(client, transaction_id, 5_000)
    body = assert_envelope(response, 409, "SVC-GW-2001")
    assert body["message"].startswith("transactionId:")
    assert payment_id in body["message"]
    # The same amount is refused too: the payment was not made for a session.
    assert_envelope(_session(client, transaction_id, 1_000), 409, "SVC-GW-2001")
    assert_envelope(_session(client, transaction_id, 5_000, mode="qr"), 409, "SVC-GW-2001")
    # Nothing was created: the one payment is all there is under the transactionId.
    assert _payments_of(client, transaction_id) == {payment_id}


def test_a_declined_charge_also_holds_the_transaction_id(client: httpx2.Client) -> None:
    transaction_id = txn()
    declined = client.post(
        "/v1/payments/card", json=charge_under(transaction_id, 1_000, cardToken="tok_test_declined")
    )
    assert_envelope(declined, 400, "SVC-PAY-3001")
    assert_envelope(_session(client, transaction_id, 1_000), 409, "SVC-GW-2001")


def test_the_session_fence_still_replays_its_own_session(client: httpx2.Client) -> None:
    transaction_id = txn()
    first = _session(client, transaction_id, 5_000)
    assert first.status_code == 201, first.text
    # Paid through the API under the session's transactionId, of its amount ...
    paid = client.post("/v1/payments/card", json=charge_under(transaction_id, 5_000))
    assert paid.status_code == 201, paid.text
    # ... the same creation request still answers the session it created.
    again = _session(client, transaction_id, 5_000)
    assert again.status_code == 200, again.text
    assert again.json()["sessionId"] == first.json()["sessionId"]


@pytest.mark.parametrize("mode", ["payment", "qr"])
def test_the_hosted_page_never_completes_with_another_payment(
    server: SandboxServer, client: httpx2.Client, anon: httpx2.Client, mode: str
) -> None:
    session_txn = txn()
    session = _open(client, session_txn, 5_000, mode=mode)
    checkout_url = session["checkoutUrl"]
    other = client.post("/v1/payments/card", json=charge_under(txn(), 1_000))
    assert other.status_code == 201, other.text
    # Moved under the session's transactionId, as a charge that raced the session's
    # creation would have left it (two connections, neither seeing the other).
    update_row(
        server.config.db_url, payments_table, other.json()["paymentId"], transaction_id=session_txn
    )

    # The page says it cannot be paid, before the buyer types anything ...
    shown = anon.get(checkout_url)
    assert shown.status_code == 409
    assert 'data-reason="taken"' in shown.text
    # ... and a submit (an open tab, a replayed POST) is refused the same way.
    if mode == "payment":
        submit = anon.post(f"{checkout_url}/pay", data=CARD, follow_redirects=False)
    else:
        submit = anon.post(f"{checkout_url}/qr", follow_redirects=False)
    assert submit.status_code == 409, submit.headers.get("location")
    assert 'data-reason="taken"' in submit.text
    assert "outcome=success" not in submit.text
    # The session was not completed: no session.completed names the 10 TL payment.
    events = client.get("/sandbox/events", params={"type": "session.completed"}).json()["items"]
    assert session["sessionId"] not in {e["data"]["sessionId"] for e in events}
    assert _payments_of(client, session_txn) == set()  # no payment event under it either


def _expire(client: httpx2.Client) -> None:
    advanced = client.post(
        "/sandbox/clock/advance", json={"seconds": limits.SESSION_LIFETIME_SECONDS + 1}
    )
    assert advanced.status_code == 200, advanced.text


def test_an_expired_session_takes_no_charge(client: httpx2.Client, anon: httpx2.Client) -> None:
    transaction_id = txn()
    session = _open(client, transaction_id, 5_000)
    _expire(client)
    assert anon.get(session["checkoutUrl"]).status_code == 410

    response = client.post("/v1/payments/card", json=charge_under(transaction_id, 5_000))
    body = assert_envelope(response, 409, "SVC-SES-4090")
    assert body["message"].startswith("transactionId:")
    assert "expired" in body["message"]
    assert _payments_of(client, transaction_id) == set()
    # Refused again, the same way: nothing was recorded that the fence could answer.
    assert_envelope(
        client.post("/v1/payments/card", json=charge_under(transaction_id, 5_000)),
        409,
        "SVC-SES-4090",
    )


def test_an_expired_session_is_refused_before_the_reconciler_marks_it(
    server: SandboxServer, client: httpx2.Client
) -> None:
    transaction_id = txn()
    session = _open(client, transaction_id, 5_000)
    # Past expiresAt on the business clock, still ``active``: the reconciler has not run.
    update_row(
        server.config.db_url,
        sessions_table,
        session["sessionId"],
        expires_at=datetime(2001, 1, 1, tzinfo=UTC),
    )
    response = client.post("/v1/payments/card", json=charge_under(transaction_id, 5_000))
    assert_envelope(response, 409, "SVC-SES-4090")
    assert _payments_of(client, transaction_id) == set()


def test_a_completed_session_takes_no_other_payment(
    client: httpx2.Client, anon: httpx2.Client
) -> None:
    transaction_id = txn()
    session = _open(client, transaction_id, 5_000)
    paid = anon.post(f"{session['checkoutUrl']}/pay", data=CARD, follow_redirects=False)
    assert paid.status_code == 303, paid.text
    assert "outcome=success" in paid.headers["location"]
    (payment_id,) = _payments_of(client, transaction_id)

    other = client.post(
        "/v1/payments/card",
        json=charge_under(transaction_id, 5_000, cardToken="tok_test_refund_async"),
    )
    body = assert_envelope(other, 409, "SVC-SES-4090")
    assert "completed" in body["message"]
    assert _payments_of(client, transaction_id) == {payment_id}


def test_the_charge_that_paid_the_session_still_answers_it(
    client: httpx2.Client, anon: httpx2.Client
) -> None:
    transaction_id = txn()
    session = _open(client, transaction_id, 5_000)
    first = client.post("/v1/payments/card", json=charge_under(transaction_id, 5_000))
    assert first.status_code == 201, first.text
    # The hosted page completes the session with that payment ...
    page = anon.post(f"{session['checkoutUrl']}/pay", data=CARD, follow_redirects=False)
    assert f"paymentId={first.json()['paymentId']}" in page.headers["location"]
    # ... and, completed and then expired, the very same charge answers the payment as now.
    _expire(client)
    again = client.post("/v1/payments/card", json=charge_under(transaction_id, 5_000))
    assert again.status_code == 200, again.text
    assert again.json()["paymentId"] == first.json()["paymentId"]
    assert again.json()["status"] == "captured"


def test_own_payment_and_open_session_through_the_client(server: SandboxServer) -> None:
    with Client(
        base_url=server.base_url, api_key=server.config.api_key, secret_key=server.config.secret_key
    ) as client:
        paid_txn, expiring_txn = txn(), txn()
        ten_lira = client.payments.charge_card(
            transaction_id=paid_txn, amount=1_000, card_token="tok_test_success"
        )
        with pytest.raises(IdempotencyConflictError) as refused:
            client.sessions.create(
                transaction_id=paid_txn, amount=5_000, return_url="https://shop.example/r"
            )
        assert ten_lira.payment_id in refused.value.message
        client.sessions.create(
            transaction_id=expiring_txn, amount=5_000, return_url="https://shop.example/r"
        )
        client.sandbox.advance_clock(limits.SESSION_LIFETIME_SECONDS + 1)  # sandbox-only
        with pytest.raises(SessionStateError) as expired:
            client.payments.charge_card(
                transaction_id=expiring_txn, amount=5_000, card_token="tok_test_success"
            )
        assert expired.value.code == "SVC-SES-4090"
