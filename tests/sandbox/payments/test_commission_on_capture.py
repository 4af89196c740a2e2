"""No commission before money moves.

The spec sets ``commission`` and ``netAmount`` on capture; an authorization posts no
ledger entries and a void has none. The sandbox shows both as 0 on every payment that
has not captured (authorized, voided, declined, pending or failed 3-D Secure), in the
charge response, ``GET /v1/payments/{id}``, the 3ds-callback, the events and the client's
models; a capture (direct, by the capture call, or by a passed challenge) sets them.
"""

from __future__ import annotations

from typing import Any

import httpx2

from tests.sandbox.bodies import charge_body
from tests.sandbox.envelope import assert_envelope
from workbench import Client
from workbench.sandbox import SandboxServer
from workbench.sandbox.cards import CHALLENGE_CODE
from workbench.sandbox.payments.service import commission_for

AMOUNT = 10_000
TAKEN = commission_for(AMOUNT, 1)  # 249


def _get(client: httpx2.Client, payment_id: str) -> dict[str, Any]:
    response = client.get(f"/v1/payments/{payment_id}")
    assert response.status_code == 200, response.text
    return dict(response.json())


def _money(body: dict[str, Any]) -> tuple[int, int]:
    return body["commission"], body["netAmount"]


def test_an_authorization_shows_no_commission_until_captured(client: httpx2.Client) -> None:
    charge = client.post("/v1/payments/card", json=charge_body(amount=AMOUNT, capture=False))
    assert charge.status_code == 201, charge.text
    assert charge.json()["status"] == "authorized"
    assert _money(charge.json()) == (0, 0)
    payment_id = charge.json()["paymentId"]
    assert _money(_get(client, payment_id)) == (0, 0)

    captured = client.post(f"/v1/payments/{payment_id}/capture", json={})
    assert captured.status_code == 200, captured.text
    assert _money(captured.json()) == (TAKEN, AMOUNT - TAKEN)
    assert _money(_get(client, payment_id)) == (TAKEN, AMOUNT - TAKEN)
    # A repeated capture changes nothing.
    again = client.post(f"/v1/payments/{payment_id}/capture", json={})
    assert _money(again.json()) == (TAKEN, AMOUNT - TAKEN)


def test_a_void_shows_no_commission(client: httpx2.Client) -> None:
    charge = client.post("/v1/payments/card", json=charge_body(amount=AMOUNT, capture=False))
    payment_id = charge.json()["paymentId"]
    voided = client.post(f"/v1/payments/{payment_id}/void", json={"reason": "stok yok"})
    assert voided.status_code == 200, voided.text
    payment = _get(client, payment_id)
    assert payment["status"] == "voided"
    assert _money(payment) == (0, 0)


def test_declined_payments_show_no_commission(client: httpx2.Client) -> None:
    for token, code in (
        ("tok_test_declined", "SVC-PAY-3001"),
        ("tok_test_insufficient_funds", "SVC-PAY-3002"),
    ):
        body = charge_body(token=token, amount=AMOUNT)
        assert_envelope(client.post("/v1/payments/card", json=body), 400, code)
        items = client.get("/sandbox/events", params={"type": "payment.declined"}).json()["items"]
        (event,) = [e for e in items if e["data"]["transactionId"] == body["transactionId"]]
        payment = _get(client, event["data"]["paymentId"])
        assert payment["status"] == "declined"
        assert _money(payment) == (0, 0)


def test_three_d_secure_payments_show_commission_only_once_captured(
    client: httpx2.Client, anon: httpx2.Client
) -> None:
    failing = client.post("/v1/payments/card", json=charge_body(token="tok_test_3ds_fail"))
    assert failing.status_code == 201, failing.text
    assert _money(failing.json()) == (0, 0)  # pending_3ds
    assert _money(_get(client, failing.json()["paymentId"])) == (0, 0)
    answer = anon.post(
        f"/sandbox/acs/{failing.json()['paymentId']}",
        json={"correlationId": failing.json()["correlationId"], "code": "000000"},
    ).json()
    callback = client.post(
        f"/v1/payments/{failing.json()['paymentId']}/3ds-callback",
        json={"pares": answer["pares"], "correlationId": answer["correlationId"]},
    )
    assert_envelope(callback, 400, "SVC-PAY-3003")
    failed = _get(client, failing.json()["paymentId"])
    assert failed["status"] == "failed"
    assert _money(failed) == (0, 0)

    passing = client.post(
        "/v1/payments/card", json=charge_body(token="tok_test_3ds_challenge", amount=AMOUNT)
    )
    assert _money(passing.json()) == (0, 0)
    answer = anon.post(
        f"/sandbox/acs/{passing.json()['paymentId']}",
        json={"correlationId": passing.json()["correlationId"], "code": CHALLENGE_CODE},
    ).json()
    callback = client.post(
        f"/v1/payments/{passing.json()['paymentId']}/3ds-callback",
        json={"pares": answer["pares"], "correlationId": answer["correlationId"]},
    )
    assert callback.status_code == 200, callback.text
    assert _money(callback.json()) == (TAKEN, AMOUNT - TAKEN)
    assert _money(_get(client, passing.json()["paymentId"])) == (TAKEN, AMOUNT - TAKEN)


def test_a_challenge_passed_on_a_preauthorization_stays_without_commission(
    client: httpx2.Client, anon: httpx2.Client
) -> None:
    charge = client.post(
        "/v1/payments/card",
        json=charge_body(token="tok_test_3ds_challenge", amount=AMOUNT, capture=False),
    )
    answer = anon.post(
        f"/sandbox/acs/{charge.json()['paymentId']}",
        json={"correlationId": charge.json()["correlationId"], "code": CHALLENGE_CODE},
    ).json()
    callback = client.post(
        f"/v1/payments/{charge.json()['paymentId']}/3ds-callback",
        json={"pares": answer["pares"], "correlationId": answer["correlationId"]},
    )
    assert callback.status_code == 200, callback.text
    assert callback.json()["status"] == "authorized"
    assert _money(callback.json()) == (0, 0)


def test_the_client_models_read_zero_before_capture(server: SandboxServer) -> None:
    with Client(
        base_url=server.base_url, api_key=server.config.api_key, secret_key=server.config.secret_key
    ) as client:
        charge = client.payments.charge_card(
            transaction_id=charge_body()["transactionId"],
            amount=AMOUNT,
            card_token="tok_test_success",
            capture=False,
        )
        assert (charge.commission, charge.net_amount) == (0, 0)
        payment = client.payments.retrieve(charge.payment_id)
        assert (payment.commission, payment.net_amount) == (0, 0)
        captured = client.payments.capture(charge.payment_id)
        assert (captured.commission, captured.net_amount) == (TAKEN, AMOUNT - TAKEN)
        payment = client.payments.retrieve(charge.payment_id)
        assert (payment.commission, payment.net_amount) == (TAKEN, AMOUNT - TAKEN)
