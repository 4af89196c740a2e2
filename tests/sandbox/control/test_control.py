"""Control routes: fail-next, latency, rate limit with Retry-After, reset, isolation."""

from __future__ import annotations

from datetime import datetime, timedelta

import httpx2

from tests.sandbox.bodies import charge_body
from tests.sandbox.envelope import assert_envelope


def test_fail_next_429_fails_exactly_one_request(client: httpx2.Client) -> None:
    client.post("/sandbox/fail-next", json={"mode": "429"})
    response = client.post("/v1/payments/card", json=charge_body())
    assert_envelope(response, 429, "SVC-GW-1004")
    assert response.headers["Retry-After"] == "1"
    assert client.post("/v1/payments/card", json=charge_body()).status_code == 201


def test_fail_next_500_is_an_enveloped_internal_error(client: httpx2.Client) -> None:
    client.post("/sandbox/fail-next", json={"mode": "500"})
    body = charge_body()
    assert_envelope(client.post("/v1/payments/card", json=body), 500, "SVC-GW-5000")
    assert client.post("/v1/payments/card", json=body).status_code == 201


def test_fail_next_timeout_delays_then_answers_503(client: httpx2.Client) -> None:
    client.post("/sandbox/fail-next", json={"mode": "timeout", "seconds": 1})
    assert_envelope(client.get("/v1/payments/pay_x"), 503, "SVC-GW-5030")


def test_fail_next_is_scoped_to_the_merchant(
    client: httpx2.Client, other_client: httpx2.Client
) -> None:
    other_client.post("/sandbox/fail-next", json={"mode": "500"})
    assert client.post("/v1/payments/card", json=charge_body()).status_code == 201
    assert other_client.post("/v1/payments/card", json=charge_body()).status_code == 500


def test_latency_is_set_and_cleared(client: httpx2.Client) -> None:
    assert client.post("/sandbox/latency", json={"milliseconds": 20}).json() == {"latencyMs": 20}
    assert client.post("/v1/payments/card", json=charge_body()).status_code == 201
    assert client.post("/sandbox/latency", json={"milliseconds": 0}).json() == {"latencyMs": 0}


def test_rate_limit_returns_429_with_retry_after(other_client: httpx2.Client) -> None:
    other_client.post("/sandbox/rate-limit", json={"perSecond": 0.01, "burst": 2})
    try:
        statuses = [other_client.get("/v1/payments/pay_x").status_code for _ in range(3)]
        assert statuses == [404, 404, 429]
        limited = other_client.get("/v1/payments/pay_x")
        assert_envelope(limited, 429, "SVC-GW-1004")
        assert int(limited.headers["Retry-After"]) >= 1
    finally:
        other_client.post("/sandbox/rate-limit", json={"perSecond": None})
    assert other_client.get("/v1/payments/pay_x").status_code == 404


def test_reset_deletes_only_the_callers_objects(
    client: httpx2.Client, other_client: httpx2.Client
) -> None:
    mine = client.post("/v1/payments/card", json=charge_body()).json()["paymentId"]
    theirs = other_client.post("/v1/payments/card", json=charge_body()).json()["paymentId"]
    deleted = other_client.post("/sandbox/reset", json={}).json()["deleted"]
    assert deleted["payments"] >= 1
    assert_envelope(other_client.get(f"/v1/payments/{theirs}"), 404, "SVC-GW-4004")
    assert client.get(f"/v1/payments/{mine}").status_code == 200
    fixtures = other_client.get("/sandbox/fixtures").json()
    assert fixtures["customers"][0]["savedCards"]


def test_control_routes_are_signed(anon: httpx2.Client) -> None:
    assert_envelope(anon.post("/sandbox/reset", json={}), 401, "SVC-GW-1003")
    assert_envelope(anon.post("/sandbox/clock/advance", json={"seconds": 1}), 401, "SVC-GW-1003")


def test_clock_advance_rejects_negative_seconds(client: httpx2.Client) -> None:
    response = client.post("/sandbox/clock/advance", json={"seconds": -5})
    assert "seconds" in assert_envelope(response, 400, "SVC-VAL-4001")["message"]


def test_clock_advance_is_bounded_to_400_days_a_call(client: httpx2.Client) -> None:
    # A decade in one call ran every renewal falling due under the reconciler lease for
    # tens of seconds; more than 400 days is refused before anything moves.
    def business_time() -> datetime:
        answer = client.post("/sandbox/clock/advance", json={"seconds": 0})
        return datetime.fromisoformat(answer.json()["businessTime"])

    before = business_time()
    too_far = client.post("/sandbox/clock/advance", json={"seconds": 400 * 86400 + 1})
    assert "seconds" in assert_envelope(too_far, 400, "SVC-VAL-4001")["message"]
    # Business time follows the wall clock between the reads: only the jump is refused.
    assert business_time() - before < timedelta(minutes=1)
