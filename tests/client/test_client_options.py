"""Client conventions: ``with_options``, ``default_headers``, per-call options, owned headers.

Each option is checked where it matters, on the request that reaches the wire
(httpx2.MockTransport through the ``script`` fixture, or a real server on 127.0.0.1
behind the client's own transport).
"""

from __future__ import annotations

import asyncio

import httpx2
import pytest

from tests.client import samples
from tests.client.fake_time import FakeTime
from tests.client.offline import API_KEY, BASE_URL, SECRET_KEY, make_async_client
from tests.client.script import Script, envelope, ok
from tests.client.wire import ScriptedServer
from workbench import AsyncClient, Client, RetryPolicy, ServerError, Tracker
from workbench._options import OWNED_HEADERS

CAPTURE_PATH = "/v1/payments/pay_1/capture"


def _timeout(request: httpx2.Request) -> dict[str, float | None]:
    timeout: dict[str, float | None] = request.extensions["timeout"]
    return timeout


def test_with_options_returns_a_configured_copy_and_leaves_the_client_alone(
    client: Client, script: Script
) -> None:
    patient = client.with_options(timeout=60.0, max_retries=4, default_headers={"X-Team": "ops"})
    assert type(patient) is Client
    assert (patient.timeout, patient.max_retries, patient.default_headers) == (
        60.0,
        4,
        {"X-Team": "ops"},
    )
    assert (client.timeout, client.max_retries, client.default_headers) == (30.0, 2, {})
    # the namespaces of the copy call through the copy, not the original
    assert patient.payments._client is patient
    assert client.payments._client is client

    script.replies = [envelope("SVC-GW-5000", 503)] * 4 + [ok(samples.CAPTURE)]
    result = patient.payments.capture("pay_1")
    assert result.retries == 4
    assert all(_timeout(r)["read"] == 60.0 for r in script.requests)
    assert all(r.headers["X-Team"] == "ops" for r in script.requests)

    script.requests.clear()
    script.replies = [envelope("SVC-GW-5000", 503)]
    with pytest.raises(ServerError):
        client.payments.capture("pay_1")
    assert len(script.requests) == 3  # the client's own max_retries=2
    assert all(_timeout(r)["read"] == 30.0 for r in script.requests)
    assert all("X-Team" not in r.headers for r in script.requests)


def test_copies_share_the_connection_pool_and_stay_independent(script: Script) -> None:
    with Client(API_KEY, SECRET_KEY, BASE_URL, transport=httpx2.MockTransport(script)) as c:
        a = c.with_options(default_headers={"X-Copy": "a"}, max_retries=0)
        b = c.with_options(default_headers={"X-Copy": "b"}, timeout=5.0)
        ab = a.with_options(default_headers={"X-Extra": "1"})
        assert c._http is a._http is b._http is ab._http
        script.replies = [ok(samples.PAYMENT)]
        for each in (a, b, ab, c):
            each.payments.retrieve("pay_1")
        sent = [(r.headers.get("X-Copy"), r.headers.get("X-Extra")) for r in script.requests]
        assert sent == [("a", None), ("b", None), ("a", "1"), (None, None)]
        assert [_timeout(r)["read"] for r in script.requests] == [30.0, 5.0, 30.0, 30.0]
        assert (a.max_retries, b.max_retries, ab.max_retries, c.max_retries) == (0, 2, 0, 2)
        a.close()  # a copy does not own the pool
        assert not c._http.is_closed
        c.payments.retrieve("pay_1")
    assert c._http.is_closed


def test_with_options_keeps_the_backoff_and_may_replace_the_policy(client: Client) -> None:
    slow = RetryPolicy(max_retries=1, initial_delay=3.0)
    custom = client.with_options(retry_policy=slow)
    assert custom._retry == slow
    more = custom.with_options(max_retries=6)
    assert more._retry == RetryPolicy(max_retries=6, initial_delay=3.0)
    with pytest.raises(ValueError, match="max_retries"):
        client.with_options(max_retries=-1)


def test_a_tracker_on_the_client_sees_the_calls_of_its_copies(
    client: Client, script: Script
) -> None:
    tracker = Tracker(client)
    script.replies = [ok({**samples.CHARGE, "status": "authorized"}), ok(samples.CAPTURE)]
    charge = client.payments.charge_card(
        transaction_id="o", amount=12500, card_token="tok_test_success", capture=False
    )
    client.with_options(timeout=3.0).payments.capture(charge.payment_id)
    assert tracker.states("pay_1") == ["authorized", "captured"]


def test_default_headers_go_on_every_call_and_extra_headers_on_one(script: Script) -> None:
    with Client(
        API_KEY,
        SECRET_KEY,
        BASE_URL,
        transport=httpx2.MockTransport(script),
        default_headers={"X-Tenant": "kahve", "User-Agent": "shop/1.0"},
    ) as c:
        script.replies = [ok(samples.PAYMENT)]
        c.payments.retrieve("pay_1", extra_headers={"X-Tenant": "cay", "X-Trace-Id": "t1"})
        c.payments.retrieve("pay_1")
    first, second = script.requests
    assert (first.headers["X-Tenant"], first.headers["X-Trace-Id"]) == ("cay", "t1")
    assert second.headers["X-Tenant"] == "kahve"
    assert "X-Trace-Id" not in second.headers
    assert first.headers["User-Agent"] == second.headers["User-Agent"] == "shop/1.0"
    # the client's own headers are still there, and still its own
    assert first.headers["X-Api-Key"] == API_KEY
    assert first.headers["Accept"] == "application/json"


@pytest.mark.parametrize("name", sorted(OWNED_HEADERS))
def test_headers_the_client_owns_are_refused_everywhere(
    client: Client, script: Script, name: str
) -> None:
    shouted = name.upper()
    with pytest.raises(ValueError, match=f"default_headers may not set {shouted}"):
        Client(API_KEY, SECRET_KEY, BASE_URL, default_headers={shouted: "x"})
    with pytest.raises(ValueError, match=f"default_headers may not set {name}"):
        client.with_options(default_headers={name: "x"})
    with pytest.raises(ValueError, match=f"extra_headers may not set {name.title()}"):
        client.payments.capture("pay_1", extra_headers={name.title(): "x"})
    assert script.requests == []


def test_refusal_says_what_to_do_instead_and_never_echoes_the_value(client: Client) -> None:
    with pytest.raises(ValueError, match="idempotency_key=") as info:
        client.payments.capture("pay_1", extra_headers={"Idempotency-Key": "k-secret-value"})
    assert "k-secret-value" not in str(info.value)
    with pytest.raises(ValueError, match="signs every attempt itself") as info:
        client.payments.capture("pay_1", extra_headers={"X-Signature": "deadbeef" * 8})
    assert "deadbeef" not in str(info.value)


def test_a_per_call_key_is_the_same_on_every_retry_of_that_call(
    client: Client, script: Script
) -> None:
    script.replies = [
        envelope("SVC-GW-5030", 503),
        envelope("SVC-GW-4290", 429),
        envelope("SVC-GW-2002", 409),
        ok(samples.CAPTURE),
    ]
    result = client.payments.capture(
        "pay_1", idempotency_key="d11c89fa-b579-4b5b-871b-e5effdf5f743", max_retries=3
    )
    assert script.header("Idempotency-Key") == ["d11c89fa-b579-4b5b-871b-e5effdf5f743"] * 4
    assert len(set(script.header("X-Timestamp"))) == 4  # each attempt signed afresh
    assert result.idempotency_key == "d11c89fa-b579-4b5b-871b-e5effdf5f743"
    assert result.retries == 3
    script.requests.clear()
    script.replies = [ok(samples.CAPTURE)]
    client.payments.capture("pay_1", idempotency_key="1d4e5da1-1520-427f-8fdf-ddd4090b4a62")
    assert script.header("Idempotency-Key") == ["1d4e5da1-1520-427f-8fdf-ddd4090b4a62"]


def test_per_call_options_win_over_the_copy_and_the_client(client: Client, script: Script) -> None:
    copy = client.with_options(timeout=20.0, max_retries=5, default_headers={"X-A": "copy"})
    script.replies = [envelope("SVC-GW-5000", 500)]
    with pytest.raises(ServerError):
        copy.payments.retrieve("pay_1", timeout=2.0, max_retries=1, extra_headers={"X-A": "call"})
    assert len(script.requests) == 2
    assert {(_timeout(r)["connect"], r.headers["X-A"]) for r in script.requests} == {(2.0, "call")}


def test_a_timeout_object_is_passed_through(client: Client, script: Script) -> None:
    script.replies = [ok(samples.PAYMENT)]
    client.payments.retrieve("pay_1", timeout=httpx2.Timeout(10.0, connect=1.5))
    assert _timeout(script.requests[0]) == {
        "connect": 1.5,
        "read": 10.0,
        "write": 10.0,
        "pool": 10.0,
    }


def test_async_with_options_and_per_call_options(script: Script, fake_time: FakeTime) -> None:
    script.replies = [envelope("SVC-GW-5000", 503), ok(samples.CAPTURE), ok(samples.PAYMENT)]

    async def run() -> AsyncClient:
        async with make_async_client(script, fake_time, default_headers={"X-T": "base"}) as c:
            fast = c.with_options(timeout=1.0, max_retries=0, default_headers={"X-T": "fast"})
            assert type(fast) is AsyncClient
            assert fast._http is c._http
            with pytest.raises(ServerError):
                await fast.payments.capture(
                    "pay_1", idempotency_key="02644d79-03a0-4a4c-89cc-df1500b17625"
                )
            await c.payments.capture(
                "pay_1",
                idempotency_key="97afa126-2305-40c1-8712-52548f576325",
                extra_headers={"X-U": "u"},
            )
            await fast.payments.retrieve("pay_1", timeout=9.0)
            await fast.close()
            assert not c._http.is_closed
            return c

    c = asyncio.run(run())
    assert c._http.is_closed
    sent = [
        (
            r.headers["X-T"],
            r.headers.get("X-U"),
            r.headers.get("Idempotency-Key"),
            _timeout(r)["read"],
        )
        for r in script.requests
    ]
    assert sent == [
        (
            "fast",
            None,
            "02644d79-03a0-4a4c-89cc-df1500b17625",
            1.0,
        ),  # max_retries=0: the 503 is final
        ("base", "u", "97afa126-2305-40c1-8712-52548f576325", 30.0),
        ("fast", None, None, 9.0),
    ]


def test_options_reach_the_wire_through_the_clients_own_transport() -> None:
    """A real server on 127.0.0.1 behind httpx2's own transport: no test seam in the client."""
    script = [(503, {"code": "SVC-GW-5000"}), (200, samples.CAPTURE)]
    with (
        ScriptedServer(script).running() as server,
        Client(API_KEY, SECRET_KEY, server.url, default_headers={"X-Shop": "kahve"}) as c,
    ):
        c._sleep = lambda _: None
        copy = c.with_options(timeout=12.0)
        result = copy.payments.capture(
            "pay_1",
            idempotency_key="95f20cb2-55fe-485d-8c76-4bb05994bdcc",
            max_retries=1,
            extra_headers={"X-Trace-Id": "t9"},
        )
    assert result.status == "captured"
    assert [(r.method, r.target) for r in server.received] == [("POST", CAPTURE_PATH)] * 2
    for request in server.received:
        assert request.headers["idempotency-key"] == "95f20cb2-55fe-485d-8c76-4bb05994bdcc"
        assert request.headers["x-shop"] == "kahve"
        assert request.headers["x-trace-id"] == "t9"
        assert request.headers["x-api-key"] == API_KEY
    assert result._response is not None
    assert _timeout(result._response.http_response.request)["read"] == 12.0


@pytest.mark.parametrize(
    "key",
    [
        "order-1001",
        "{3f2b8c1e-9d4a-4b7e-8c2f-1a5d6e7f8091}",
        "3f2b8c1e-9d4a-1b7e-8c2f-1a5d6e7f8091",  # version 1
        "3f2b8c1e9d4a4b7e8c2f1a5d6e7f8091",
        "",
    ],
)
def test_an_idempotency_key_that_is_not_a_uuid4_is_refused_before_sending(
    client: Client, script: Script, key: str
) -> None:
    """The spec's header table gives Idempotency-Key the format UUID v4."""
    with pytest.raises(ValueError, match="idempotency_key must be a UUID v4") as info:
        client.payments.capture("pay_1", idempotency_key=key)
    assert key not in str(info.value) or key == ""
    with pytest.raises(ValueError, match="X-Request-Id must be a UUID v4"):
        client.payments.capture("pay_1", extra_headers={"X-Request-Id": key})
    assert script.requests == []
    script.replies = [ok(samples.CAPTURE)]
    good = "3f2b8c1e-9d4a-4b7e-8c2f-1a5d6e7f8091"
    client.payments.capture("pay_1", idempotency_key=good, extra_headers={"X-Request-Id": good})
    assert script.header("Idempotency-Key") == [good]
    assert script.header("X-Request-Id") == [good]


def test_the_async_client_refuses_a_key_that_is_not_a_uuid4_too(
    script: Script, fake_time: FakeTime
) -> None:
    async def run() -> None:
        async with make_async_client(script, fake_time) as client:
            with pytest.raises(ValueError, match="idempotency_key must be a UUID v4"):
                await client.payments.capture("pay_1", idempotency_key="order-1001")

    asyncio.run(run())
    assert script.requests == []
