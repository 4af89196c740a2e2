"""Subscription, authorization and header rules on ``workbench sandbox --workers 2``.

Every rule here is checked over real HTTP against two worker processes sharing an
SQLite file, then a PostgreSQL database; each request opens a connection of its own,
so the kernel spreads them over both workers. The reconciler runs only when a test
advances the clock or ticks. A renewal against a cancel has its own race in
``subscriptions/test_cancel_during_renewal.py``; the UUID v4 headers are below too, and
so are the session fence, the UTF-8 transactionId, commission on capture and the card
mask's length, whichever worker answers each step, on the same two workers rather than
on a third pair of its own.
"""

from __future__ import annotations

import uuid
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from typing import Any

import httpx2
import pytest

from tests.sandbox.bodies import charge_body, charge_under, session_body, txn
from tests.sandbox.clients import signed_client
from tests.sandbox.envelope import assert_envelope
from tests.sandbox.subscriptions.api import sub_body
from tests.sandbox.subscriptions.clock import parse
from workbench import Client, PaymentStateError
from workbench.sandbox.subscriptions import after
from workbench.spec import is_uuid4, limits

DAY = 86_400


#: The two-worker sandbox (the ``workers`` fixture) runs no reconciler.
RECONCILER = False


@pytest.fixture(scope="module")
def base(workers: tuple[str, str, int]) -> str:
    """A two-worker sandbox of this module's own, on each backend."""
    return workers[0]


def _call(base: str, method: str, path: str, body: Any = None) -> httpx2.Response:
    # A connection per request: either worker may answer it.
    with signed_client(base) as client:
        return client.request(method, path, json=body)


def _ok(base: str, method: str, path: str, body: Any = None, status: int = 200) -> Any:
    response = _call(base, method, path, body)
    assert response.status_code == status, response.text
    return response.json()


@pytest.fixture
def fresh(base: str) -> str:
    """The demo merchant reset (clock, records) before the test."""
    _ok(base, "POST", "/sandbox/reset", {})
    return base


def _advance(base: str, seconds: int) -> None:
    _ok(base, "POST", "/sandbox/clock/advance", {"seconds": seconds})


def _tick(base: str) -> None:
    _ok(base, "POST", "/sandbox/reconciler/tick", {})


def _portal(base: str, public_hash: str, action: str = "", body: Any = None) -> httpx2.Response:
    path = f"/v1/public/subscriptions/{public_hash}" + (f"/{action}" if action else "")
    with httpx2.Client(base_url=base, timeout=30, verify=False) as anon:
        return anon.post(path, json=body) if action else anon.get(path)


# An immediate cancel after a scheduled one answers cancelAtPeriodEnd false.


def test_an_immediate_cancel_after_a_scheduled_one_is_not_at_period_end(
    fresh: str,
) -> None:
    sub = _ok(fresh, "POST", "/v1/subscriptions", sub_body(), 201)
    path = f"/v1/subscriptions/{sub['id']}"
    scheduled = _ok(fresh, "POST", f"{path}/cancel", {"atPeriodEnd": True})
    assert (scheduled["status"], scheduled["cancelAtPeriodEnd"]) == ("active", True)
    now = _ok(fresh, "POST", f"{path}/cancel", {"atPeriodEnd": False})
    assert (now["status"], now["cancelAtPeriodEnd"]) == ("cancelled", False)
    read = _ok(fresh, "GET", path)
    assert (read["status"], read["cancelAtPeriodEnd"], read["nextChargeAt"]) == (
        "cancelled",
        False,
        None,
    )
    events = _ok(fresh, "GET", "/sandbox/events", None)["items"]
    cancelled = [e for e in events if e["type"] == "subscription.cancelled"]
    assert [e["data"]["cancelAtPeriodEnd"] for e in cancelled] == [False]


def test_the_portal_immediate_cancel_after_a_scheduled_one_is_not_at_period_end(
    fresh: str,
) -> None:
    sub = _ok(fresh, "POST", "/v1/subscriptions", sub_body(), 201)
    scheduled = _portal(fresh, sub["publicHash"], "cancel", {})
    assert scheduled.status_code == 200, scheduled.text
    assert (scheduled.json()["status"], scheduled.json()["cancelAtPeriodEnd"]) == ("active", True)
    now = _portal(fresh, sub["publicHash"], "cancel", {"atPeriodEnd": False})
    assert now.status_code == 200, now.text
    assert (now.json()["status"], now.json()["cancelAtPeriodEnd"]) == ("cancelled", False)
    read = _ok(fresh, "GET", f"/v1/subscriptions/{sub['id']}")
    assert read["cancelAtPeriodEnd"] is False


# Resuming a subscription set to end keeps the paid period; the portal shows no
# charge date for a charge that will not happen.


def _charges(base: str, sub_id: str) -> list[dict[str, Any]]:
    return list(_ok(base, "GET", f"/v1/subscriptions/{sub_id}/charges")["items"])


def test_resume_against_a_scheduled_end_runs_to_the_paid_period_end_uncharged(
    fresh: str,
) -> None:
    sub = _ok(fresh, "POST", "/v1/subscriptions", sub_body(), 201)
    path = f"/v1/subscriptions/{sub['id']}"
    paid_until = after(parse(sub["createdAt"]), "month", 1, 1)
    assert parse(sub["nextChargeAt"]) == paid_until
    _advance(fresh, 10 * DAY)
    _ok(fresh, "POST", f"{path}/cancel", {"atPeriodEnd": True})
    portal = _portal(fresh, sub["publicHash"]).json()
    assert (portal["status"], portal["nextChargeAt"]) == ("active", None)
    _ok(fresh, "POST", f"{path}/pause", {})
    _advance(fresh, 5 * DAY)
    assert _ok(fresh, "POST", f"{path}/resume", {})["status"] == "active"

    _tick(fresh)
    resumed = _ok(fresh, "GET", path)
    assert (resumed["status"], resumed["cancelAtPeriodEnd"]) == ("active", True)
    assert parse(resumed["nextChargeAt"]) == paid_until
    portal = _portal(fresh, sub["publicHash"]).json()
    assert (portal["status"], portal["nextChargeAt"]) == ("active", None)

    _advance(fresh, 20 * DAY)  # fifteen days after the resume: the month ends
    ended = _ok(fresh, "GET", path)
    assert ended["status"] == "cancelled"
    assert _charges(fresh, sub["id"]) == []
    events = _ok(fresh, "GET", "/sandbox/events")["items"]
    cancelled = [e for e in events if e["type"] == "subscription.cancelled"]
    assert [e["data"]["reason"] for e in cancelled] == ["period_end"]
    assert parse(cancelled[0]["createdAt"]) >= paid_until


def test_resume_against_a_scheduled_end_that_has_passed_ends_at_the_next_tick(
    fresh: str,
) -> None:
    sub = _ok(fresh, "POST", "/v1/subscriptions", sub_body(), 201)
    path = f"/v1/subscriptions/{sub['id']}"
    _ok(fresh, "POST", f"{path}/cancel", {"atPeriodEnd": True})
    _ok(fresh, "POST", f"{path}/pause", {})
    _advance(fresh, 40 * DAY)
    _ok(fresh, "POST", f"{path}/resume", {})
    _tick(fresh)
    assert _ok(fresh, "GET", path)["status"] == "cancelled"
    assert _charges(fresh, sub["id"]) == []


def test_resume_without_a_scheduled_end_still_charges_at_the_next_tick(
    fresh: str,
) -> None:
    sub = _ok(fresh, "POST", "/v1/subscriptions", sub_body(), 201)
    path = f"/v1/subscriptions/{sub['id']}"
    _ok(fresh, "POST", f"{path}/pause", {})
    _advance(fresh, 5 * DAY)
    _ok(fresh, "POST", f"{path}/resume", {})
    portal = _portal(fresh, sub["publicHash"]).json()
    assert portal["nextChargeAt"] is not None
    _tick(fresh)
    read = _ok(fresh, "GET", path)
    assert (read["status"], read["cycleNumber"]) == ("active", 1)
    assert [c["status"] for c in _charges(fresh, sub["id"])] == ["captured"]
    assert parse(read["nextChargeAt"]) > parse(sub["nextChargeAt"]) + timedelta(days=4)


# Authorizations expire after a lifetime in business time (7 days by default).


def _authorize(base: str) -> str:
    body = charge_body(capture=False, threeDSecure=False)
    charged = _ok(base, "POST", "/v1/payments/card", body, 201)
    assert charged["status"] == "authorized"
    return str(charged["paymentId"])


def _voided_reasons(base: str, payment_id: str) -> list[str]:
    events = _ok(base, "GET", "/sandbox/events", None)["items"]
    return [
        e["data"]["reason"]
        for e in events
        if e["type"] == "payment.voided" and e["data"]["paymentId"] == payment_id
    ]


def test_an_authorization_past_its_lifetime_is_voided_and_not_captured(
    fresh: str,
) -> None:
    payment_id = _authorize(fresh)
    _advance(fresh, 60 * DAY)
    read = _ok(fresh, "GET", f"/v1/payments/{payment_id}")
    assert read["status"] == "voided"
    reasons = _voided_reasons(fresh, payment_id)
    assert len(reasons) == 1
    assert reasons[0].startswith("authorization expired at ")
    assert "7 days" in reasons[0]
    body = assert_envelope(
        _call(fresh, "POST", f"/v1/payments/{payment_id}/capture", {}), 409, "SVC-PAY-4090"
    )
    assert "authorization expired" in body["message"]
    assert _ok(fresh, "GET", f"/v1/payments/{payment_id}")["status"] == "voided"
    assert len(_voided_reasons(fresh, payment_id)) == 1


def test_a_capture_meeting_an_expired_authorization_voids_it_and_answers_409(
    fresh: str,
) -> None:
    payment_id = _authorize(fresh)
    _advance(fresh, 600)
    # Shortened after the authorization: it is past its lifetime and no pass has run.
    lifetime = _ok(fresh, "POST", "/sandbox/authorization-lifetime", {"seconds": 300})
    assert lifetime == {"seconds": 300}
    assert _ok(fresh, "GET", f"/v1/payments/{payment_id}")["status"] == "authorized"
    body = assert_envelope(
        _call(fresh, "POST", f"/v1/payments/{payment_id}/capture", {}), 409, "SVC-PAY-4090"
    )
    assert "authorization expired" in body["message"]
    assert "5 minutes" in body["message"]
    assert _ok(fresh, "GET", f"/v1/payments/{payment_id}")["status"] == "voided"
    assert [r.startswith("authorization expired") for r in _voided_reasons(fresh, payment_id)] == [
        True
    ]


def test_within_its_lifetime_an_authorization_still_captures(fresh: str) -> None:
    payment_id = _authorize(fresh)
    _advance(fresh, 7 * DAY - 60)
    captured = _ok(fresh, "POST", f"/v1/payments/{payment_id}/capture", {})
    assert captured["status"] == "captured"
    _advance(fresh, 3600)
    assert _ok(fresh, "GET", f"/v1/payments/{payment_id}")["status"] == "captured"


def test_the_lifetime_is_set_through_a_control_route_and_reset_restores_it(
    fresh: str,
) -> None:
    assert _ok(fresh, "POST", "/sandbox/authorization-lifetime", {"seconds": 3600}) == {
        "seconds": 3600
    }
    payment_id = _authorize(fresh)
    _advance(fresh, 3599)
    assert _ok(fresh, "GET", f"/v1/payments/{payment_id}")["status"] == "authorized"
    _advance(fresh, 2)
    assert _ok(fresh, "GET", f"/v1/payments/{payment_id}")["status"] == "voided"
    assert "1 hour" in _voided_reasons(fresh, payment_id)[0]
    assert _ok(fresh, "POST", "/sandbox/authorization-lifetime", {"seconds": None}) == {
        "seconds": 7 * DAY
    }
    assert_envelope(
        _call(fresh, "POST", "/sandbox/authorization-lifetime", {"seconds": 0}),
        400,
        "SVC-VAL-4001",
    )
    _ok(fresh, "POST", "/sandbox/authorization-lifetime", {"seconds": 60})
    _ok(fresh, "POST", "/sandbox/reset", {})
    assert _ok(fresh, "POST", "/sandbox/authorization-lifetime", {"seconds": None}) == {
        "seconds": 7 * DAY
    }


def test_through_the_client_a_late_capture_raises_and_the_payment_is_voided(
    fresh: str,
) -> None:
    with Client(base_url=fresh) as client:
        charge = client.payments.charge_card(
            transaction_id=txn(),
            amount=25_000,
            card_token="tok_test_success",
            three_d_secure=False,
            capture=False,
        )
        client.sandbox.advance_clock(8 * DAY)
        with pytest.raises(PaymentStateError, match="authorization expired") as raised:
            client.payments.capture(charge.payment_id)
        assert raised.value.http_status == 409
        assert client.payments.retrieve(charge.payment_id).status == "voided"
        assert client.sandbox.set_authorization_lifetime(None).seconds == 7 * DAY


# Idempotency-Key and X-Request-Id are UUID v4.

NOT_V4 = {
    "braced": "{3f2b8c1e-9d4a-4b7e-8c2f-1a5d6e7f8091}",
    "version-1": str(uuid.uuid1()),
    "version-5": str(uuid.uuid5(uuid.NAMESPACE_URL, "https://shop.example/order/1")),
    "no-hyphens": uuid.uuid4().hex,
    "urn": f"urn:uuid:{uuid.uuid4()}",
    "order-id": "order-1001",
}


@pytest.mark.parametrize("value", list(NOT_V4.values()), ids=list(NOT_V4))
def test_an_idempotency_key_that_is_not_a_uuid4_is_refused_and_nothing_written(
    fresh: str, value: str
) -> None:
    body = charge_body()
    with signed_client(fresh) as client:
        refused = client.post("/v1/payments/card", json=body, headers={"Idempotency-Key": value})
        envelope = assert_envelope(refused, 400, "SVC-GW-4000")
        assert "Idempotency-Key" in envelope["message"]
        assert "UUID v4" in envelope["message"]
        assert is_uuid4(envelope["requestId"])
        assert envelope["requestId"] == refused.headers["X-Request-Id"]
        # Nothing was recorded: the same charge with a good key creates the payment.
        good = {"Idempotency-Key": str(uuid.uuid4())}
        assert client.post("/v1/payments/card", json=body, headers=good).status_code == 201
        sub = client.post("/v1/subscriptions", json=sub_body()).json()
        portal = httpx2.post(
            f"{fresh}/v1/public/subscriptions/{sub['publicHash']}/cancel",
            json={},
            headers={"Idempotency-Key": value},
        )
        assert "Idempotency-Key" in assert_envelope(portal, 400, "SVC-GW-4000")["message"]
        advance = client.post(
            "/sandbox/clock/advance", json={"seconds": 1}, headers={"Idempotency-Key": value}
        )
        assert_envelope(advance, 400, "SVC-GW-4000")
        assert client.get(f"/v1/subscriptions/{sub['id']}").json()["status"] == "active"


@pytest.mark.parametrize("value", list(NOT_V4.values()), ids=list(NOT_V4))
def test_an_x_request_id_that_is_not_a_uuid4_is_refused_never_echoed(
    fresh: str, value: str
) -> None:
    with signed_client(fresh) as client:
        refused = client.get("/sandbox/fixtures", headers={"X-Request-Id": value})
        envelope = assert_envelope(refused, 400, "SVC-GW-4000")
        assert "X-Request-Id" in envelope["message"]
        assert envelope["requestId"] != value
        assert is_uuid4(envelope["requestId"])
        assert refused.headers["X-Request-Id"] == envelope["requestId"]
        charge = client.post(
            "/v1/payments/card", json=charge_body(), headers={"X-Request-Id": value}
        )
        assert is_uuid4(assert_envelope(charge, 400, "SVC-GW-4000")["requestId"])


def test_a_uuid4_request_id_is_echoed_in_the_header_and_the_envelope(fresh: str) -> None:
    given = str(uuid.uuid4())
    with signed_client(fresh) as client:
        answer = client.post(
            "/v1/payments/card", json={"amount": 1}, headers={"X-Request-Id": given}
        )
    assert assert_envelope(answer, 400, "SVC-VAL-4001")["requestId"] == given
    assert answer.headers["X-Request-Id"] == given


# The session fence, UTF-8 ids, commission and card mask on the same two workers.


def _session_body(transaction_id: str, amount: int) -> dict[str, Any]:
    return session_body(transaction_id, amount, returnUrl="https://shop.example/dönüş")


def test_session_fence_utf8_commission_and_mask_hold_across_two_workers(base: str) -> None:
    """Whichever worker answers each step (no reset: its own ids)."""
    tag = uuid.uuid4().hex[:8]

    # A Turkish transactionId paid 10 TL takes no 50 TL session.
    paid_txn = f"sipariş-{tag}-ödendi"
    paid = _call(base, "POST", "/v1/payments/card", charge_under(paid_txn, 1_000))
    assert paid.status_code == 201, paid.text
    refused = _call(base, "POST", "/v1/payments/sessions", _session_body(paid_txn, 5_000))
    body = assert_envelope(refused, 409, "SVC-GW-2001")
    assert paid.json()["paymentId"] in body["message"]

    # An authorization shows no commission on either worker until captured.
    held = _call(
        base, "POST", "/v1/payments/card", charge_under(f"ön-onay-{tag}", 10_000, capture=False)
    )
    assert (held.json()["commission"], held.json()["netAmount"]) == (0, 0)
    payment_path = f"/v1/payments/{held.json()['paymentId']}"
    for _ in range(4):
        shown = _call(base, "GET", payment_path).json()
        assert (shown["commission"], shown["netAmount"]) == (0, 0)
    captured = _call(base, "POST", f"{payment_path}/capture", {})
    assert captured.json()["commission"] == 249
    assert _call(base, "GET", payment_path).json()["netAmount"] == 10_000 - 249

    # A 19-digit card's mask, from the token to the payment.
    token = _call(
        base,
        "POST",
        "/v1/cards/tokens",
        {"cardNumber": "4000000000000000006", "expiryMonth": 12, "expiryYear": 2030, "cvc": "123"},
    ).json()["token"]
    charge = _call(
        base, "POST", "/v1/payments/card", charge_under(f"kart-{tag}", 1_000, cardToken=token)
    )
    assert charge.json()["cardMask"] == "400000*********0006"
    assert _call(base, "GET", f"/v1/payments/{charge.json()['paymentId']}").json()["cardMask"] == (
        "400000*********0006"
    )

    # Expired sessions take no charge, whichever worker is asked, many at once.
    expiring = [f"süresi-dolan-{tag}-{i}" for i in range(6)]
    for transaction_id in expiring:
        created = _call(base, "POST", "/v1/payments/sessions", _session_body(transaction_id, 5_000))
        assert created.status_code == 201, created.text
    advanced = _call(
        base, "POST", "/sandbox/clock/advance", {"seconds": limits.SESSION_LIFETIME_SECONDS + 1}
    )
    assert advanced.status_code == 200, advanced.text
    with ThreadPoolExecutor(max_workers=6) as pool:
        answers = list(
            pool.map(
                lambda t: _call(base, "POST", "/v1/payments/card", charge_under(t, 5_000)),
                expiring * 2,
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
