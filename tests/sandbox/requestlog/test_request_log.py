"""The request log: each merchant's last N requests, redacted, written off the request's path.

Every test starts a sandbox of its own (once per backend) and a merchant of its own,
reads the log from the database, and waits for the writer by draining it
(`RequestLogWork.drain`), never by sleeping.
"""

from __future__ import annotations

import hashlib
import json
import threading
import uuid
from collections.abc import Callable
from typing import Any

import httpx2
import sqlalchemy as sa

from tests.sandbox.bodies import charge_body
from tests.sandbox.clients import signed_client
from workbench.sandbox import SandboxServer
from workbench.sandbox.requestlog import (
    LoggedRequest,
    RequestFilter,
    RequestLogWork,
    find_request,
    list_requests,
    request_log,
)
from workbench.signing import format_timestamp, sign

#: A test card number (Luhn-valid) and CVC a request may carry, never to be stored.
CARD_NUMBER = "4242424242424242"


def _merchant(server: SandboxServer) -> dict[str, Any]:
    made = httpx2.post(f"{server.base_url}/sandbox/merchants", json={"name": "request log"})
    assert made.status_code == 201, made.text
    merchant: dict[str, Any] = made.json()
    return merchant


def _writer(server: SandboxServer) -> RequestLogWork:
    work = server.sandbox.request_log
    assert work is not None
    return work


def _logged(server: SandboxServer, merchant_id: str, **where: Any) -> list[LoggedRequest]:
    _writer(server).drain()
    with server.sandbox.db.read() as conn:
        return list_requests(conn, merchant_id, RequestFilter(**where), limit=10_000)


def test_each_merchant_keeps_its_newest_n_and_the_oldest_are_dropped(
    sandbox_with: Callable[..., SandboxServer],
) -> None:
    server = sandbox_with(request_log_size=5)
    first, second = _merchant(server), _merchant(server)
    with signed_client(server.base_url, first["apiKey"], first["secretKey"]) as own:
        ids = [own.get("/sandbox/fixtures").headers["x-request-id"] for _ in range(8)]
    with signed_client(server.base_url, second["apiKey"], second["secretKey"]) as other:
        other_ids = [other.get("/sandbox/fixtures").headers["x-request-id"] for _ in range(3)]
    kept = _logged(server, first["merchantId"])
    assert [r.request_id for r in kept] == ids[::-1][:5]  # newest first, the 3 oldest gone
    assert [r.request_id for r in _logged(server, second["merchantId"])] == other_ids[::-1]
    with server.sandbox.db.read() as conn:
        total = conn.execute(sa.select(sa.func.count()).select_from(request_log)).scalar_one()
    assert total == 5 + 3  # the demo merchants made no request here


def test_an_entry_holds_what_the_request_and_its_answer_were(
    sandbox_with: Callable[..., SandboxServer],
) -> None:
    server = sandbox_with()
    made = _merchant(server)
    key = str(uuid.uuid4())
    with signed_client(server.base_url, made["apiKey"], made["secretKey"]) as own:
        body = charge_body(threeDSecure=False)
        first = own.post("/v1/payments/card", json=body, headers={"Idempotency-Key": key})
        again = own.post("/v1/payments/card", json=body, headers={"Idempotency-Key": key})
        missing = own.get("/v1/payments/pay_000000000000000000000000")
    assert first.status_code == again.status_code == 201
    assert missing.status_code == 404
    entries = _logged(server, made["merchantId"])
    assert [e.path for e in entries] == [
        "/v1/payments/pay_000000000000000000000000",
        "/v1/payments/card",
        "/v1/payments/card",
    ]
    lookup, replay, charge = entries
    assert charge.request_id == first.headers["x-request-id"]
    assert (charge.method, charge.status, charge.code, charge.replayed) == (
        "POST",
        201,
        None,
        False,
    )
    assert replay.replayed
    assert replay.idempotency_key == charge.idempotency_key == key
    assert (lookup.status, lookup.code) == (404, missing.json()["code"])
    assert charge.at.tzinfo is not None
    assert charge.at.utcoffset().total_seconds() == 0
    assert charge.latency_ms > 0
    assert json.loads(charge.request_body) == body
    assert json.loads(charge.response_body)["paymentId"] == first.json()["paymentId"]
    headers = dict(charge.request_headers)
    assert headers["x-api-key"] == made["apiKey"]
    assert headers["idempotency-key"] == key
    assert headers["x-signature"] == first.request.headers["x-signature"][:8] + "\u2026"
    with server.sandbox.db.read() as conn:
        found = find_request(conn, made["merchantId"], charge.request_id)
        assert found == charge
        assert find_request(conn, "mrc_demo0001", charge.request_id) is None


def test_card_data_and_secrets_are_never_stored(
    sandbox_with: Callable[..., SandboxServer],
) -> None:
    server = sandbox_with()
    made = _merchant(server)
    with signed_client(server.base_url, made["apiKey"], made["secretKey"]) as own:
        token = own.post(
            "/v1/cards/tokens",
            json={
                "cardNumber": CARD_NUMBER,
                "expiryMonth": 12,
                "expiryYear": 2030,
                "cvc": "123",
                "cardholderName": "Ayşe Yılmaz",
            },
        )
        assert token.status_code == 201, token.text
        # A number where a token belongs, and the merchant's own secrets in a body.
        refused = own.post("/v1/payments/card", json=charge_body(token=CARD_NUMBER))
        assert refused.status_code == 400
        fixtures = own.get("/sandbox/fixtures")  # answers with the webhook secret
        assert made["webhookSecret"] in fixtures.text
    entries = _logged(server, made["merchantId"])
    assert len(entries) == 3
    with server.sandbox.db.read() as conn:
        stored = json.dumps([list(map(str, row)) for row in conn.execute(sa.select(request_log))])
    for secret in (
        CARD_NUMBER,
        "4242 4242 4242 4242",
        '"123"',
        made["secretKey"],
        made["webhookSecret"],
        token.request.headers["x-signature"],
    ):
        assert secret not in stored
    assert "[redacted]" in entries[-1].request_body  # the card number's field


def test_a_request_answers_while_the_writer_is_blocked(
    sandbox_with: Callable[..., SandboxServer],
) -> None:
    server = sandbox_with()
    made = _merchant(server)
    work = _writer(server)
    work.drain()  # the merchant's creation is no API request of a merchant: nothing queued
    blocked, release = threading.Event(), threading.Event()
    real = work._write

    def stuck(batch: Any) -> int:
        blocked.set()
        release.wait()
        return real(batch)

    work._write = stuck  # type: ignore[method-assign]
    try:
        with signed_client(server.base_url, made["apiKey"], made["secretKey"]) as own:
            first = own.get("/sandbox/fixtures")
            work.queue.wake.set()
            assert blocked.wait(30)  # the writer holds the first request, stuck
            answers = [own.post("/v1/payments/card", json=charge_body()) for _ in range(3)]
        assert first.status_code == 200
        assert [a.status_code for a in answers] == [201] * 3
        assert len(work.queue) == 3  # waiting behind the stuck batch, not written
    finally:
        release.set()
    assert len(_logged(server, made["merchantId"])) == 4


def test_a_full_queue_drops_new_entries_and_counts_them(
    sandbox_with: Callable[..., SandboxServer],
) -> None:
    server = sandbox_with()
    made = _merchant(server)
    work = _writer(server)
    work.queue.capacity = 2
    with work._pass:  # the writer cannot take anything while the test holds its pass
        with signed_client(server.base_url, made["apiKey"], made["secretKey"]) as own:
            answers = [own.get("/sandbox/fixtures").status_code for _ in range(5)]
        assert answers == [200] * 5
        assert (len(work.queue), work.queue.dropped) == (2, 3)
    assert len(_logged(server, made["merchantId"])) == 2


def test_a_wrong_signature_is_logged_with_its_diagnosis(
    sandbox_with: Callable[..., SandboxServer],
) -> None:
    server = sandbox_with()
    made = _merchant(server)
    body = json.dumps(charge_body()).encode()
    # The query string signed with the path: the usual mistake the diagnosis names.
    timestamp = format_timestamp()
    signature = sign(made["secretKey"], timestamp, "POST", "/v1/payments/card?trace=1", body)
    headers = {"X-Api-Key": made["apiKey"], "X-Timestamp": timestamp, "X-Signature": signature}
    sent = httpx2.post(
        f"{server.base_url}/v1/payments/card?trace=1",
        content=body,
        headers={**headers, "Content-Type": "application/json"},
    )
    assert sent.status_code == 401
    assert sent.json()["code"] == "SVC-GW-1002"
    [entry] = _logged(server, made["merchantId"])
    assert (entry.code, entry.path) == ("SVC-GW-1002", "/v1/payments/card?trace=1")
    diagnosis = entry.diagnosis
    assert diagnosis is not None
    digest = hashlib.sha256(body).hexdigest()
    assert diagnosis["canonical"] == [timestamp, "POST", "/v1/payments/card", digest]
    assert diagnosis["bodySha256"] == digest
    assert diagnosis["signatureSent"] == signature[:8]
    assert not diagnosis["matches"]
    assert [m["name"] for m in diagnosis["mistakes"]] == ["query-string-included"]
    assert "without '?'" in diagnosis["mistakes"][0]["fix"]
    stored = json.dumps(entry.diagnosis) + json.dumps(entry.request_headers)
    assert signature not in stored
    assert made["secretKey"] not in stored


def test_an_unknown_key_is_nobodys_and_the_log_can_be_turned_off(
    sandbox_with: Callable[..., SandboxServer],
) -> None:
    server = sandbox_with()
    with signed_client(server.base_url, "pk_test_nobody", "sk_test_nobody") as stranger:
        assert stranger.get("/sandbox/fixtures").status_code == 401
    _writer(server).drain()
    with server.sandbox.db.read() as conn:
        assert conn.execute(sa.select(sa.func.count()).select_from(request_log)).scalar_one() == 0
    server.stop()
    off = sandbox_with(request_log_size=0)
    assert off.sandbox.request_queue is None
    assert off.sandbox.request_log is None
    made = _merchant(off)
    with signed_client(off.base_url, made["apiKey"], made["secretKey"]) as own:
        assert own.get("/sandbox/fixtures").status_code == 200
    with off.sandbox.db.read() as conn:
        assert conn.execute(sa.select(sa.func.count()).select_from(request_log)).scalar_one() == 0


def test_a_trim_falls_due_every_quarter_of_n_and_the_reads_show_the_newest_n(
    sandbox_with: Callable[..., SandboxServer],
) -> None:
    server = sandbox_with(request_log_size=8)
    made = _merchant(server)
    work = _writer(server)
    assert work.trim_every == 2
    ids = []
    with signed_client(server.base_url, made["apiKey"], made["secretKey"]) as own:
        for _ in range(9):  # one batch each: trims after the 2nd, 4th, 6th and 8th
            ids.append(own.get("/sandbox/fixtures").headers["x-request-id"])
            work.drain()
    with server.sandbox.db.read() as conn:
        stored = conn.execute(sa.select(sa.func.count()).select_from(request_log)).scalar_one()
        shown = list_requests(conn, made["merchantId"], keep=8, limit=100)
        assert find_request(conn, made["merchantId"], ids[0], keep=8) is None
        assert find_request(conn, made["merchantId"], ids[1], keep=8) is not None
    assert stored == 9  # the 9th is not yet a trim's worth
    assert [r.request_id for r in shown] == ids[::-1][:8]
    ids.append(_fresh_request(server, made))
    work.drain()  # the 10th: a trim is due, the two oldest go
    with server.sandbox.db.read() as conn:
        stored = conn.execute(sa.select(sa.func.count()).select_from(request_log)).scalar_one()
    assert stored == 8


def _fresh_request(server: SandboxServer, made: dict[str, Any]) -> str:
    with signed_client(server.base_url, made["apiKey"], made["secretKey"]) as own:
        return str(own.get("/sandbox/fixtures").headers["x-request-id"])


def test_beyond_the_writers_rate_the_queued_entries_are_dropped_and_counted(
    sandbox_with: Callable[..., SandboxServer],
) -> None:
    server = sandbox_with()
    made = _merchant(server)
    work = _writer(server)
    work.max_rate = 0  # no entry a second: the three below are all over it
    work._allowance = 0.0
    with work._pass:  # the thread cannot pass while the requests are made
        with signed_client(server.base_url, made["apiKey"], made["secretKey"]) as own:
            answers = [own.get("/sandbox/fixtures").status_code for _ in range(3)]
        assert answers == [200] * 3
    work._budgeted_pass()  # (or the thread's own: either drops them)
    assert len(work.queue) == 0
    assert work.queue.dropped == 3
    assert _logged(server, made["merchantId"]) == []


def test_a_merchant_deleted_while_its_requests_wait_leaves_no_log_behind(
    sandbox_with: Callable[..., SandboxServer],
) -> None:
    server = sandbox_with()
    made = _merchant(server)
    work = _writer(server)
    with work._pass:  # its requests wait in the queue, unwritten, until it is gone
        with signed_client(server.base_url, made["apiKey"], made["secretKey"]) as own:
            charged = [own.post("/v1/payments/card", json=charge_body()) for _ in range(2)]
            gone = own.delete(f"/sandbox/merchants/{made['merchantId']}")
        assert [a.status_code for a in charged] == [201, 201]
        assert gone.status_code == 200, gone.text
        assert len(work.queue) == 3
    work.drain()
    with server.sandbox.db.read() as conn:
        left = conn.execute(
            sa.select(sa.func.count()).where(request_log.c.merchant_id == made["merchantId"])
        ).scalar_one()
    assert left == 0
    assert len(work.queue) == 0
