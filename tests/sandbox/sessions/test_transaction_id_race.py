"""A card charge racing a checkout session (or the session's buyer) on one transactionId,
on two workers, over SQLite and over PostgreSQL.

One transactionId belongs to one payment and at most one session, whichever arrives
first: a charge of other terms than the session's, sent at the same moment as the
session's creation, is accepted or the session is, never both. And the buyer on the
hosted page is told what happened to their own attempt: when a declined API charge took
the session's transactionId first, the page says nothing was charged, never that their
(approved) card failed.
"""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx2
import pytest

from tests.sandbox.bodies import charge_under, session_body, txn
from tests.sandbox.clients import signed_client

#: The two-worker sandbox (the ``workers`` fixture) runs no reconciler.
RECONCILER = False

CARD = {"cardNumber": "4242424242424242", "expiry": "12/30", "cvc": "123", "holder": "Ayse"}
#: Races of a charge against a session's creation; PostgreSQL accepted both in 9 of 400.
ROUNDS = 400
#: Races of a declined API charge against a buyer's submit.
BUYERS = 50


@pytest.fixture
def base(workers: tuple[str, str, int]) -> Iterator[str]:
    """The shared two-worker sandbox, the demo merchant's rate limit off meanwhile."""
    url = workers[0]
    assert _post(url, "/sandbox/rate-limit", {"perSecond": 0}).status_code == 200
    try:
        yield url
    finally:
        assert _post(url, "/sandbox/rate-limit", {"perSecond": None}).status_code == 200


def _post(base: str, path: str, body: dict[str, Any]) -> httpx2.Response:
    with signed_client(base) as client:  # a connection of its own: either worker answers
        return client.post(path, json=body)


def _pay(checkout_url: str) -> httpx2.Response:
    with httpx2.Client(timeout=30, verify=False) as buyer:
        return buyer.post(f"{checkout_url}/pay", data=CARD, follow_redirects=False)


def _payments_made(base: str) -> dict[str, list[str]]:
    """transactionId -> the event type of each payment made under it, oldest first."""
    with signed_client(base) as client:
        items = client.get("/sandbox/events").json()["items"]
    made: dict[str, list[str]] = {}
    for e in items:
        if e["type"] in ("payment.captured", "payment.declined", "payment.3ds_pending"):
            made.setdefault(e["data"]["transactionId"], []).append(e["type"])
    return made


def test_a_charge_and_a_session_on_one_transaction_id_are_never_both_accepted(
    base: str,
) -> None:
    ids = [txn() for _ in range(ROUNDS)]
    # Each round's two requests are submitted one after the other, so they start together.
    with ThreadPoolExecutor(max_workers=8) as pool:
        futures = [
            (
                pool.submit(_post, base, "/v1/payments/card", charge_under(t, 1_000)),
                pool.submit(_post, base, "/v1/payments/sessions", session_body(t, 5_000)),
            )
            for t in ids
        ]
        answers = [(charge.result(), session.result()) for charge, session in futures]
    both = sum(c.status_code == 201 and s.status_code == 201 for c, s in answers)
    print(f"{ROUNDS} races on {base}: charge and session both accepted {both} times")
    for charge, session in answers:
        if charge.status_code == 201:
            assert session.status_code == 409, session.text
            assert session.json()["code"] == "SVC-GW-2001"
        else:
            assert session.status_code == 201, session.text
            assert charge.status_code == 400, charge.text
            assert charge.json()["message"].startswith("amount:")


def test_a_buyer_is_told_what_happened_to_their_own_attempt(base: str) -> None:
    def open_session() -> tuple[str, str]:
        transaction_id = txn()
        created = _post(base, "/v1/payments/sessions", session_body(transaction_id, 5_000))
        assert created.status_code == 201, created.text
        return transaction_id, created.json()["checkoutUrl"]

    def declined(transaction_id: str) -> httpx2.Response:
        body = charge_under(transaction_id, 5_000, cardToken="tok_test_declined")
        return _post(base, "/v1/payments/card", body)

    # Raced, from several connections at once.
    sessions = [open_session() for _ in range(BUYERS)]
    with ThreadPoolExecutor(max_workers=8) as pool:
        futures = [(pool.submit(declined, t), pool.submit(_pay, url)) for t, url in sessions]
        answers = [(charge.result(), page.result()) for charge, page in futures]
    failed, paid, taken = 0, 0, 0
    payments = _payments_made(base)
    for (transaction_id, _), (charge, page) in zip(sessions, answers, strict=True):
        location = page.headers.get("location", "")
        failed += "outcome=failed" in location
        made = payments.get(transaction_id)
        if page.status_code == 303 and "outcome=success" in location:
            paid += 1  # the buyer's card was charged; the API charge was refused
            assert made == ["payment.captured"]
            assert charge.json()["code"] in ("SVC-GW-2001", "SVC-SES-4090"), charge.text
        elif page.status_code == 409 and 'data-reason="taken"' in page.text:
            taken += 1  # the declined charge came first; the buyer's card was not charged
            assert made == ["payment.declined"]
            assert charge.json()["code"] == "SVC-PAY-3001", charge.text
    print(f"{BUYERS} buyers raced: {paid} paid, {taken} told nothing was charged, {failed} failed")
    # Then one after the other: the declined charge, then the buyer's approved card.
    transaction_id, checkout_url = open_session()
    assert declined(transaction_id).status_code == 400
    shown = httpx2.get(checkout_url, timeout=30)  # before the buyer types anything
    assert shown.status_code == 409
    assert 'data-reason="taken"' in shown.text
    told = _pay(checkout_url)
    assert told.status_code == 409, told.headers.get("location")
    assert 'data-reason="taken"' in told.text
    assert _payments_made(base)[transaction_id] == ["payment.declined"]

    assert failed == 0
    assert paid + taken == BUYERS
