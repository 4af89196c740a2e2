"""The card charge's route answers alike whichever way a request reaches its endpoint.

`payments.routes.CardChargeRoute` calls `charge_card` straight for a well-formed
request and leaves anything else to FastAPI's dependency solving. Two sandboxes on
databases of their own get the same sequence of requests, the second with a query
string on every request (which the route never takes straight, and which changes
nothing else: the signature and the Idempotency-Key's endpoint leave it out), so that
its charges all go FastAPI's way; every status, header name and body must match once
the values that are random by design (ids, request ids, times, auth codes) are masked.
On PostgreSQL the straight call also serves on a kept key record it confirms in the
charge's transaction, and tries that transaction unlocked first (`storage.statements`),
so both backends are compared.
"""

from __future__ import annotations

import contextlib
import json
import re
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest
from fastapi.routing import APIRoute

from tests.postgres import database_url
from tests.sandbox.bodies import charge_body
from tests.sandbox.clients import signed_client
from workbench.sandbox import SandboxConfig, SandboxServer, create_app

_RANDOM = [
    (re.compile(r"pay_[0-9a-f]{24}"), "pay_X"),
    (re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"), "UUID"),
    (re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ"), "TIME"),
    (re.compile(r'"authCode":"\d{6}"'), '"authCode":"N"'),
    (re.compile(r"127\.0\.0\.1:\d+"), "HOST"),
]
# Headers whose values depend on the moment or the connection, not on the answer.
_VOLATILE = {"date", "x-request-id", "content-length", "server"}


#: A query string: `CardChargeRoute` leaves such a request to FastAPI.
_THE_FASTAPI_WAY = {"via": "fastapi"}


def _mask(text: str) -> str:
    for pattern, replacement in _RANDOM:
        text = pattern.sub(replacement, text)
    return text


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def pair(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[str, str]]:
    urls = []
    with contextlib.ExitStack() as stack:
        for _ in range(2):
            folder = tmp_path_factory.mktemp("charge-paths")
            url = stack.enter_context(database_url(request.param, folder))
            config = SandboxConfig(db_url=url, run_reconciler_in_background=False)
            server = SandboxServer(config, app=create_app(config))
            urls.append(stack.enter_context(server).base_url)
        yield urls[0], urls[1]


Send = Callable[[httpx2.Client], httpx2.Response]


def _same(pair: tuple[str, str], *sends: Send) -> list[httpx2.Response]:
    """Send the same requests to both; assert the answers match; return the straight one's."""
    answers: list[list[httpx2.Response]] = []
    for url, params in zip(pair, ({}, _THE_FASTAPI_WAY), strict=True):
        with signed_client(url, params=params) as client:
            answers.append([send(client) for send in sends])
    for fast, slow in zip(*answers, strict=True):
        assert fast.status_code == slow.status_code, (fast.text, slow.text)
        assert _mask(fast.text) == _mask(slow.text)
        fast_headers = {k: _mask(v) for k, v in fast.headers.items() if k not in _VOLATILE}
        slow_headers = {k: _mask(v) for k, v in slow.headers.items() if k not in _VOLATILE}
        assert fast_headers == slow_headers
        assert fast.headers["x-request-id"] in fast.text or fast.status_code < 400
    return answers[0]


def _post(body: Any, **kwargs: Any) -> Send:
    return lambda client: client.post("/v1/payments/card", json=body, **kwargs)


def test_approved_challenged_and_declined_charges(pair: tuple[str, str]) -> None:
    fixed = {"transactionId": f"txn_{uuid.uuid4().hex}"}
    answers = _same(
        pair,
        _post({**charge_body(), **fixed}),
        _post({**charge_body(), **fixed}),  # the transactionId fence: 200, same body
        _post({**charge_body(amount=999), **fixed}),  # same id, other payload: 2001
        _post(charge_body("tok_test_3ds_challenge")),
        _post(charge_body("tok_test_declined")),
        _post(charge_body("tok_test_insufficient_funds", capture=False)),
        _post(charge_body(threeDSecure=False, capture=False, installmentCount=3)),
    )
    assert [r.status_code for r in answers] == [201, 200, 409, 201, 400, 400, 201]


def _session(transaction_id: str, **extra: Any) -> Send:
    body = {
        "transactionId": transaction_id,
        "amount": 25_000,
        "currency": "TRY",
        "returnUrl": "https://shop.example/return",
        **extra,
    }
    body = {k: v for k, v in body.items() if v is not None}
    return lambda client: client.post("/v1/payments/sessions", json=body)


def test_session_binding_answers_alike(pair: tuple[str, str]) -> None:
    paid, qr, update = (f"txn_{uuid.uuid4().hex}" for _ in range(3))
    bound = {"transactionId": paid, "threeDSecure": False}
    answers = _same(
        pair,
        _session(paid),
        _post({**charge_body(amount=100), **bound}),
        _post({**charge_body(amount=25_000, installmentCount=3), **bound}),
        _post({**charge_body(amount=25_000), **bound}),
        _post({**charge_body(amount=25_000), **bound}),  # the fence
        _post({**charge_body(amount=100), **bound}),  # still the session's terms
        _session(qr, mode="qr"),
        _post({**charge_body(amount=25_000), "transactionId": qr}),
        _session(update, mode="card_update_only", amount=None, customerId="cus_demo_ayse"),
        _post({**charge_body(amount=25_000), "transactionId": update}),
    )
    assert [r.status_code for r in answers] == [201, 400, 400, 201, 200, 400, 201, 400, 201, 400]
    assert [r.json().get("message", "").split(":")[0] for r in answers if r.status_code == 400] == [
        "amount",
        "installmentCount",
        "amount",
        "transactionId",
        "transactionId",
    ]


def test_session_fence_utf8_commission_and_mask_answer_alike(pair: tuple[str, str]) -> None:
    """A paid transactionId takes no session, an expired session takes no charge (its
    own charge still answers), a UTF-8 transactionId, no commission on an authorization
    and the mask's length."""
    paid, expiring, turkish = (f"txn_{uuid.uuid4().hex}" for _ in range(3))
    turkish = f"sipariş-ığüşöç {turkish[-8:]}"
    amex = {"cardNumber": "378282246310005", "expiryMonth": 12, "expiryYear": 2030, "cvc": "1234"}
    answers = _same(
        pair,
        _post({**charge_body(amount=1_000), "transactionId": paid}),
        _session(paid),
        _session(expiring),
        _post({**charge_body(amount=25_000), "transactionId": expiring}),
        lambda client: client.post("/sandbox/clock/advance", json={"seconds": 1801}),
        _post({**charge_body(amount=25_000), "transactionId": expiring}),  # its own: 200
        _post({**charge_body(amount=25_000, capture=False), "transactionId": expiring}),
        _post({**charge_body(capture=False), "transactionId": turkish}),
        _post({**charge_body(capture=False), "transactionId": turkish}),
        _post({**charge_body(), "transactionId": "ş" * 65}),
        _post({**charge_body(), "transactionId": "renewal sub_x 1"}),
    )
    statuses = [r.status_code for r in answers]
    assert statuses == [201, 409, 201, 201, 200, 200, 409, 201, 200, 400, 400]
    assert answers[1].json()["code"] == "SVC-GW-2001"
    assert answers[6].json()["code"] == "SVC-SES-4090"
    assert answers[7].json()["commission"] == answers[7].json()["netAmount"] == 0
    assert answers[8].json()["paymentId"] == answers[7].json()["paymentId"]
    masks = []
    for url in pair:  # a token is each sandbox's own
        with signed_client(url) as client:
            token = client.post("/v1/cards/tokens", json=amex).json()["token"]
            masks.append(client.post("/v1/payments/card", json=charge_body(token)).json())
    assert masks[0]["cardMask"] == masks[1]["cardMask"] == "378282*****0005"


def test_fence_answers_alike_with_this_requests_id(pair: tuple[str, str]) -> None:
    declined = {**charge_body("tok_test_declined"), "transactionId": f"txn_{uuid.uuid4().hex}"}
    held = {**charge_body(capture=False, threeDSecure=False)}
    answers = _same(
        pair,
        _post(declined),
        _post(declined),
        _post(held),
        lambda client: client.post(f"/v1/payments/{_last_payment(client)}/capture", json={}),
        _post(held),
    )
    assert answers[1].json()["requestId"] == answers[1].headers["X-Request-Id"]
    assert answers[1].json()["requestId"] != answers[0].json()["requestId"]
    assert answers[4].status_code == 200
    assert answers[4].json()["status"] == "captured"


def _last_payment(client: httpx2.Client) -> str:
    items = client.get("/sandbox/events").json()["items"]
    return str(
        next(e for e in reversed(items) if e["type"] == "payment.authorized")["data"]["paymentId"]
    )


def test_idempotency_keys(pair: tuple[str, str]) -> None:
    key = {"Idempotency-Key": str(uuid.uuid4())}
    body = charge_body()
    answers = _same(
        pair,
        _post(body, headers=key),
        _post(body, headers=key),
        _post(charge_body(), headers=key),
        _post(charge_body(), headers={"Idempotency-Key": "x" * 256}),
        _post(charge_body(), headers={"Idempotency-Key": "bad key"}),
    )
    assert [r.status_code for r in answers] == [201, 201, 409, 400, 400]
    assert answers[1].headers["Idempotent-Replayed"] == "true"


@pytest.mark.parametrize(
    "send",
    [
        _post({**charge_body(), "amount": "100"}),
        _post({**charge_body(), "amout": 1}),
        _post({**charge_body(), "cardToken": "4111111111111111"}),
        _post({**charge_body(), "cardToken": "tok_nope"}),
        _post({**charge_body(), "customerId": "cus_nobody"}),
        _post([charge_body()]),
        lambda c: c.post("/v1/payments/card", content=b"{broken"),
        lambda c: c.post("/v1/payments/card", content=b"[" * 60_000),
        lambda c: c.post("/v1/payments/card", content=b'{"a":1}', headers={"Content-Type": ""}),
        lambda c: c.post(
            "/v1/payments/card", json=charge_body(), headers={"Content-Type": "text/plain"}
        ),
    ],
    ids=[
        "string-amount",
        "unknown-field",
        "raw-pan",
        "unknown-token",
        "unknown-customer",
        "array",
        "broken-json",
        "deep-json",
        "empty-content-type",
        "text-plain",
    ],
)
def test_refusals(pair: tuple[str, str], send: Send) -> None:
    (answer,) = _same(pair, send)
    assert 400 <= answer.status_code < 500


def test_a_trailing_slash_is_answered_alike(pair: tuple[str, str]) -> None:
    send: Send = lambda c: c.post("/v1/payments/card/", json=charge_body())  # noqa: E731
    (answer,) = _same(pair, send)
    assert answer.status_code == 201  # the path is canonicalised before the signature


def test_a_query_string_is_left_to_the_route_and_answered_alike(pair: tuple[str, str]) -> None:
    send: Send = lambda c: c.post("/v1/payments/card?x=1", json=charge_body())  # noqa: E731
    (answer,) = _same(pair, send)
    assert answer.status_code == 201  # the signature covers the path without the query


def test_a_pan_is_never_echoed(pair: tuple[str, str]) -> None:
    (answer,) = _same(pair, _post({**charge_body(), "cardToken": "4111 1111 1111 1111"}))
    envelope = answer.json()
    assert set(envelope) >= {"code", "message", "requestId"}, envelope
    del envelope["requestId"]  # a random UUID, which may hold "4111" by chance
    assert "4111" not in json.dumps(envelope)


def test_a_well_formed_charge_skips_fastapis_dependency_solving(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The comparison above means something only if the first sandbox's charges were
    called straight: FastAPI's way (`APIRoute.handle`) is taken only for the doubtful one."""
    taken: list[str] = []
    fastapi_way = APIRoute.handle

    async def counted(route: APIRoute, scope: Any, receive: Any, send: Any) -> None:
        taken.append(str(scope["path"]))
        await fastapi_way(route, scope, receive, send)

    monkeypatch.setattr(APIRoute, "handle", counted)
    config = SandboxConfig(db_url=f"sqlite:///{tmp_path / 'x.db'}")
    with SandboxServer(config) as server, signed_client(server.base_url) as client:
        assert _post(charge_body())(client).status_code == 201
        assert taken == []
        assert _post(charge_body(), params=_THE_FASTAPI_WAY)(client).status_code == 201
        assert taken == ["/v1/payments/card"]
