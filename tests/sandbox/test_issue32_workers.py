"""Issue 32 on ``workbench sandbox --workers 2``, SQLite file and PostgreSQL alike.

Every request opens a connection of its own, so the two worker processes share the
work: the session fence (rule 1), the expired session (rule 2), the UTF-8
``transactionId`` (rule 4), no commission before capture (rule 5) and the card mask's
length (rule 8) must hold whichever worker answers each step.
"""

from __future__ import annotations

import uuid
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx2

from tests.sandbox.bodies import charge_under, session_body
from tests.sandbox.clients import signed_client
from tests.sandbox.envelope import assert_envelope
from workbench.spec import limits


def _post(base: str, path: str, body: dict[str, Any]) -> httpx2.Response:
    with signed_client(base) as fresh:
        return fresh.post(path, json=body)


def _get(base: str, path: str) -> httpx2.Response:
    with signed_client(base) as fresh:
        return fresh.get(path)


def _session(transaction_id: str, amount: int) -> dict[str, Any]:
    return session_body(transaction_id, amount, returnUrl="https://shop.example/dönüş")


def test_issue32_rules_hold_across_two_workers(workers: tuple[str, str, int]) -> None:
    base, _, _ = workers
    tag = uuid.uuid4().hex[:8]

    # Rule 1 and 4: a Turkish transactionId paid 10 TL takes no 50 TL session.
    paid_txn = f"sipariş-{tag}-ödendi"
    paid = _post(base, "/v1/payments/card", charge_under(paid_txn, 1_000))
    assert paid.status_code == 201, paid.text
    refused = _post(base, "/v1/payments/sessions", _session(paid_txn, 5_000))
    body = assert_envelope(refused, 409, "SVC-GW-2001")
    assert paid.json()["paymentId"] in body["message"]

    # Rule 5: an authorization shows no commission on either worker until captured.
    held = _post(base, "/v1/payments/card", charge_under(f"ön-onay-{tag}", 10_000, capture=False))
    assert (held.json()["commission"], held.json()["netAmount"]) == (0, 0)
    payment_path = f"/v1/payments/{held.json()['paymentId']}"
    for _ in range(4):
        shown = _get(base, payment_path).json()
        assert (shown["commission"], shown["netAmount"]) == (0, 0)
    captured = _post(base, f"{payment_path}/capture", {})
    assert captured.json()["commission"] == 249
    assert _get(base, payment_path).json()["netAmount"] == 10_000 - 249

    # Rule 8: a 19-digit card's mask, from the token to the payment.
    token = _post(
        base,
        "/v1/cards/tokens",
        {"cardNumber": "4000000000000000006", "expiryMonth": 12, "expiryYear": 2030, "cvc": "123"},
    ).json()["token"]
    charge = _post(base, "/v1/payments/card", charge_under(f"kart-{tag}", 1_000, cardToken=token))
    assert charge.json()["cardMask"] == "400000*********0006"
    assert _get(base, f"/v1/payments/{charge.json()['paymentId']}").json()["cardMask"] == (
        "400000*********0006"
    )

    # Rule 2: expired sessions take no charge, whichever worker is asked, many at once.
    expiring = [f"süresi-dolan-{tag}-{i}" for i in range(6)]
    for transaction_id in expiring:
        created = _post(base, "/v1/payments/sessions", _session(transaction_id, 5_000))
        assert created.status_code == 201, created.text
    advanced = _post(
        base, "/sandbox/clock/advance", {"seconds": limits.SESSION_LIFETIME_SECONDS + 1}
    )
    assert advanced.status_code == 200, advanced.text
    with ThreadPoolExecutor(max_workers=6) as pool:
        answers = list(
            pool.map(
                lambda t: _post(base, "/v1/payments/card", charge_under(t, 5_000)), expiring * 2
            )
        )
    for answer in answers:
        assert_envelope(answer, 409, "SVC-SES-4090")
    with signed_client(base) as fresh:
        items = fresh.get("/sandbox/events").json()["items"]
    assert not [
        e
        for e in items
        if e["type"].startswith("payment.") and e["data"]["transactionId"] in expiring
    ]
