"""Restart: state survives the server; an in-flight refund completes exactly once after it."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from tests.sandbox.bodies import charge_body
from tests.sandbox.clients import signed_client
from workbench.sandbox import SandboxServer
from workbench.testing import running_sandbox


def test_refund_in_flight_at_restart_completes_exactly_once(
    sandbox_with: Callable[..., SandboxServer],
) -> None:
    first = sandbox_with()
    with signed_client(first.base_url) as client:
        body = charge_body(token="tok_test_refund_async")
        pid = client.post("/v1/payments/card", json=body).json()["paymentId"]
        refund = client.post(f"/v1/payments/{pid}/refund", json={"amount": 4000})
        assert refund.status_code == 202
        rid = refund.json()["lastRefund"]["refundId"]
    first.stop()
    second = sandbox_with()  # on the same database
    with signed_client(second.base_url) as client:
        payment = client.get(f"/v1/payments/{pid}").json()
        assert (payment["refundAmount"], payment["refundableAmount"]) == (0, 6000)
        client.post("/sandbox/clock/advance", json={"seconds": 120})
        client.post("/sandbox/clock/advance", json={"seconds": 120})
        client.post("/sandbox/reconciler/tick", json={})
        payment = client.get(f"/v1/payments/{pid}").json()
        assert (payment["refundAmount"], payment["refundableAmount"]) == (4000, 6000)
        settled = client.get("/sandbox/events", params={"type": "refund.settled"}).json()["items"]
        assert [e["data"]["refundId"] for e in settled] == [rid]
        assert client.post("/v1/payments/card", json=body).json()["paymentId"] == pid


def test_background_reconciler_settles_refunds_on_its_own(tmp_path: Path) -> None:
    with (
        running_sandbox(
            db_dir=tmp_path, refund_settle_seconds=0, reconciler_interval_seconds=0.05
        ) as server,
        signed_client(server.base_url) as client,
    ):
        body = charge_body(token="tok_test_refund_async")
        pid = client.post("/v1/payments/card", json=body).json()["paymentId"]
        assert client.post(f"/v1/payments/{pid}/refund", json={}).status_code == 202
        for _ in range(200):
            if client.get(f"/v1/payments/{pid}").json()["refundAmount"] == 10_000:
                break
            server.sandbox.reconciler._stop.wait(0.05)
        assert client.get(f"/v1/payments/{pid}").json()["refundAmount"] == 10_000


def test_python_clock_advance_matches_the_control_route(tmp_path: Path) -> None:
    with (
        running_sandbox(db_dir=tmp_path, run_reconciler_in_background=False) as server,
        signed_client(server.base_url) as client,
    ):
        pid = client.post(
            "/v1/payments/card", json=charge_body(token="tok_test_refund_async")
        ).json()["paymentId"]
        client.post(f"/v1/payments/{pid}/refund", json={})
        server.sandbox.advance_clock(61)
        assert client.get(f"/v1/payments/{pid}").json()["refundAmount"] == 10_000


def test_two_servers_on_one_database_settle_each_refund_exactly_once(
    sandbox_with: Callable[..., SandboxServer],
) -> None:
    settings = {
        "refund_settle_seconds": 0,
        "reconciler_interval_seconds": 0.02,
        "run_reconciler_in_background": True,
    }
    one, two = sandbox_with(**settings), sandbox_with(**settings)
    with (
        signed_client(one.base_url) as a,
        signed_client(two.base_url) as b,
    ):
        payments = []
        for index in range(6):
            client = (a, b)[index % 2]
            body = charge_body(token="tok_test_refund_async", amount=3000)
            pid = client.post("/v1/payments/card", json=body).json()["paymentId"]
            for amount in (1000, 500):
                assert client.post(
                    f"/v1/payments/{pid}/refund", json={"amount": amount}
                ).status_code in (200, 202)
            payments.append(pid)
        for _ in range(300):
            if all(a.get(f"/v1/payments/{p}").json()["refundAmount"] == 1500 for p in payments):
                break
            one.sandbox.reconciler._stop.wait(0.05)
        for pid in payments:
            payment = b.get(f"/v1/payments/{pid}").json()
            assert (payment["refundAmount"], payment["refundableAmount"]) == (1500, 1500)
        settled = a.get("/sandbox/events", params={"type": "refund.settled"}).json()["items"]
        assert len(settled) == 12
        assert len({e["data"]["refundId"] for e in settled}) == 12
