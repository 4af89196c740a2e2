"""3-D Secure: frictionless, challenge pass and fail, forged pares, duplicate callbacks."""

from __future__ import annotations

from typing import Any

import httpx2

from tests.sandbox.bodies import charge_body
from tests.sandbox.envelope import assert_envelope
from workbench.sandbox.cards import CHALLENGE_CODE


def _challenge(
    client: httpx2.Client,
    token: str = "tok_test_3ds_challenge",  # noqa: S107 - a test card token
    **extra: Any,
) -> dict[str, Any]:
    response = client.post("/v1/payments/card", json=charge_body(token=token, **extra))
    assert response.status_code == 201
    body = dict(response.json())
    assert body["status"] == "pending_3ds"
    return body


def _answer(
    anon: httpx2.Client, charge: dict[str, Any], code: str = CHALLENGE_CODE
) -> dict[str, Any]:
    response = anon.post(
        f"/sandbox/acs/{charge['paymentId']}",
        json={"correlationId": charge["correlationId"], "code": code},
    )
    assert response.status_code == 200
    return dict(response.json())


def test_frictionless_card_completes_at_once(client: httpx2.Client) -> None:
    body = client.post("/v1/payments/card", json=charge_body()).json()
    assert body["status"] == "captured"
    assert body["threeDSecure"] is True
    assert "correlationId" not in body


def test_challenge_card_returns_pending_with_correlation_id_and_acs_address(
    client: httpx2.Client, anon: httpx2.Client
) -> None:
    charge = _challenge(client)
    assert charge["correlationId"]
    assert charge["authCode"] is None
    page = anon.get(charge["acsUrl"])
    assert page.status_code == 200
    assert "3-D Secure" in page.text
    assert client.get(f"/v1/payments/{charge['paymentId']}").json()["status"] == "pending_3ds"


def test_challenge_completes_to_captured(client: httpx2.Client, anon: httpx2.Client) -> None:
    charge = _challenge(client)
    answer = _answer(anon, charge)
    response = client.post(
        f"/v1/payments/{charge['paymentId']}/3ds-callback",
        json={"pares": answer["pares"], "correlationId": charge["correlationId"]},
    )
    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "captured"
    assert set(body) == {
        "id",
        "status",
        "amount",
        "currency",
        "commission",
        "netAmount",
        "authCode",
        "completedAt",
    }
    assert body["authCode"]


def test_challenge_with_capture_false_completes_to_authorized(
    client: httpx2.Client, anon: httpx2.Client
) -> None:
    charge = _challenge(client, capture=False)
    answer = _answer(anon, charge)
    response = client.post(
        f"/v1/payments/{charge['paymentId']}/3ds-callback",
        json={"pares": answer["pares"], "correlationId": charge["correlationId"]},
    )
    assert response.json()["status"] == "authorized"


def test_duplicate_callback_returns_the_first_result_unchanged(
    client: httpx2.Client, anon: httpx2.Client
) -> None:
    charge = _challenge(client)
    answer = _answer(anon, charge)
    payload = {"pares": answer["pares"], "correlationId": charge["correlationId"]}
    first = client.post(f"/v1/payments/{charge['paymentId']}/3ds-callback", json=payload)
    second = client.post(f"/v1/payments/{charge['paymentId']}/3ds-callback", json=payload)
    assert second.status_code == first.status_code == 200
    assert second.content == first.content


def test_wrong_code_fails_the_challenge(client: httpx2.Client, anon: httpx2.Client) -> None:
    charge = _challenge(client)
    answer = _answer(anon, charge, code="000000")
    assert answer["result"] == "N"
    response = client.post(
        f"/v1/payments/{charge['paymentId']}/3ds-callback",
        json={"pares": answer["pares"], "correlationId": charge["correlationId"]},
    )
    assert_envelope(response, 400, "SVC-PAY-3003")
    assert client.get(f"/v1/payments/{charge['paymentId']}").json()["status"] == "failed"


def test_3ds_fail_card_fails_even_with_the_right_code(
    client: httpx2.Client, anon: httpx2.Client
) -> None:
    charge = _challenge(client, token="tok_test_3ds_fail")
    answer = _answer(anon, charge)
    response = client.post(
        f"/v1/payments/{charge['paymentId']}/3ds-callback",
        json={"pares": answer["pares"], "correlationId": charge["correlationId"]},
    )
    assert_envelope(response, 400, "SVC-PAY-3003")


def test_forged_pares_is_rejected(client: httpx2.Client, anon: httpx2.Client) -> None:
    charge = _challenge(client, token="tok_test_3ds_fail")
    answer = _answer(anon, charge)
    text, _, mac = answer["pares"].partition(".")
    import base64
    import json

    claims = json.loads(base64.urlsafe_b64decode(text))
    claims["result"] = "Y"
    forged = base64.urlsafe_b64encode(json.dumps(claims, sort_keys=True).encode()).decode()
    response = client.post(
        f"/v1/payments/{charge['paymentId']}/3ds-callback",
        json={"pares": f"{forged}.{mac}", "correlationId": charge["correlationId"]},
    )
    assert_envelope(response, 400, "SVC-PAY-4001")
    assert client.get(f"/v1/payments/{charge['paymentId']}").json()["status"] == "pending_3ds"


def test_pares_of_another_payment_is_rejected(client: httpx2.Client, anon: httpx2.Client) -> None:
    first, second = _challenge(client), _challenge(client)
    answer = _answer(anon, first)
    response = client.post(
        f"/v1/payments/{second['paymentId']}/3ds-callback",
        json={"pares": answer["pares"], "correlationId": second["correlationId"]},
    )
    assert_envelope(response, 400, "SVC-PAY-4001")


def test_mismatched_correlation_id_is_rejected(client: httpx2.Client, anon: httpx2.Client) -> None:
    charge = _challenge(client)
    answer = _answer(anon, charge)
    response = client.post(
        f"/v1/payments/{charge['paymentId']}/3ds-callback",
        json={"pares": answer["pares"], "correlationId": "other"},
    )
    assert_envelope(response, 400, "SVC-PAY-4001")


def test_three_d_secure_false_skips_the_challenge(client: httpx2.Client) -> None:
    body = charge_body(token="tok_test_3ds_challenge", threeDSecure=False)
    assert client.post("/v1/payments/card", json=body).json()["status"] == "captured"


def test_unfinished_challenge_fails_after_the_timeout(client: httpx2.Client) -> None:
    charge = _challenge(client)
    client.post("/sandbox/clock/advance", json={"seconds": 16 * 60})
    assert client.get(f"/v1/payments/{charge['paymentId']}").json()["status"] == "failed"


def test_acs_page_echoes_nothing_for_an_unknown_challenge(anon: httpx2.Client) -> None:
    page = anon.get("/sandbox/acs/pay_x", params={"correlationId": "<script>x</script>"})
    assert page.status_code == 404
    assert "<script>" not in page.text
    assert "&lt;script&gt;" not in page.text


def test_acs_page_shows_amount_and_card_only_for_the_pending_challenges_correlation_id(
    client: httpx2.Client, anon: httpx2.Client
) -> None:
    charge = _challenge(client)
    pid, correlation = charge["paymentId"], charge["correlationId"]
    mask = client.get(f"/v1/payments/{pid}").json()["cardMask"]
    shown = anon.get(f"/sandbox/acs/{pid}", params={"correlationId": correlation})
    assert shown.status_code == 200
    assert mask in shown.text
    for guess in ("", "x", correlation[:-1], correlation + "0", correlation.upper()):
        if guess == correlation:
            continue
        page = anon.get(f"/sandbox/acs/{pid}", params={"correlationId": guess})
        assert page.status_code == 404, guess
        assert mask not in page.text
        assert "100,00" not in page.text
    _answer(anon, charge)
    done = client.post(
        f"/v1/payments/{pid}/3ds-callback",
        json={"pares": _answer(anon, charge)["pares"], "correlationId": correlation},
    )
    assert done.status_code == 200, done.text
    # Once answered, the challenge is over: the page no longer shows the payment.
    after = anon.get(f"/sandbox/acs/{pid}", params={"correlationId": correlation})
    assert after.status_code == 404
    assert mask not in after.text
