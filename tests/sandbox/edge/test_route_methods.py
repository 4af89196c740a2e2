"""Every route answers only its own methods: 405 with ``Allow`` before any other work.

The routes are read from the running app itself, so a route added later is covered
with no change here. Each is asked with every method, with and without a JSON body,
unsigned: a method no route at the path takes is 405 SVC-GW-4005 (never 401, 400 or
201), and ``Allow`` names exactly the methods of the routes matching the path, ``HEAD``
included where a page (a ``GET`` outside the API document) answers it. The card charge,
whose straight call once took any method, is then sent each other method signed, with
a valid body and an Idempotency-Key: nothing is charged and the key stays unused.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Callable, Iterator

import httpx2
import pytest

from tests.sandbox.bodies import charge_body
from tests.sandbox.clients import signed_client
from tests.sandbox.envelope import assert_envelope
from workbench.sandbox import SandboxServer

METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "TRACE", "HEAD")
_PARAM = re.compile(r"\{(\w+)(?::(\w+))?\}")


def _concrete(path: str) -> str:
    """``path`` with each parameter filled: a path parameter with two segments."""

    def fill(found: re.Match[str]) -> str:
        return "a/b" if found.group(2) == "path" else str(uuid.uuid4())

    return _PARAM.sub(fill, path)


Route = tuple[str, frozenset[str], bool, re.Pattern[str]]


def _routes(server: SandboxServer) -> list[Route]:
    """(path template, methods, is a page, regex) of every route of the app with methods."""
    found = []
    for route in server.app.routes:
        methods = getattr(route, "methods", None)
        regex = getattr(route, "path_regex", None)
        if methods and regex is not None:
            page = "GET" in methods and not getattr(route, "include_in_schema", True)
            found.append((str(route.path), frozenset(methods), page, regex))  # type: ignore[attr-defined]
    return found


def _expected(routes: list[Route], path: str) -> set[str]:
    allowed: set[str] = set()
    for _, methods, page, regex in routes:
        if regex.match(path):
            allowed |= methods | ({"HEAD"} if page else set())
    return allowed


@pytest.fixture
def sandbox(sandbox_with: Callable[..., SandboxServer]) -> SandboxServer:
    # The address limit off: hundreds of unsigned requests from one address.
    return sandbox_with(public_rate_limit_per_second=0)


@pytest.fixture
def anon_client(sandbox: SandboxServer) -> Iterator[httpx2.Client]:
    with httpx2.Client(base_url=sandbox.base_url, timeout=30, verify=False) as c:
        yield c


def test_every_route_answers_only_its_methods(
    sandbox: SandboxServer, anon_client: httpx2.Client
) -> None:
    routes = _routes(sandbox)
    assert len(routes) > 40, "the app's routes were not found"
    assert any(path == "/v1/payments/card" for path, *_ in routes)
    body = json.dumps(charge_body()).encode()
    checked = refused = 0
    for template, *_ in routes:
        path = _concrete(template)
        allowed = _expected(routes, path)
        for method in METHODS:
            for content in (None, body):
                headers = {"Content-Type": "application/json"} if content else {}
                answer = anon_client.request(method, path, content=content, headers=headers)
                where = f"{method} {path} ({template}) {'with' if content else 'without'} body"
                checked += 1
                if method in allowed:
                    assert answer.status_code != 405, where
                    continue
                refused += 1
                assert answer.status_code == 405, (where, answer.status_code, answer.text)
                assert answer.headers["allow"] == ", ".join(sorted(allowed)), where
                if method != "HEAD":
                    assert_envelope(answer, 405, "SVC-GW-4005")
    assert refused > checked // 2, (checked, refused)


def test_head_on_a_page_is_its_get_without_a_body(
    sandbox: SandboxServer, anon_client: httpx2.Client
) -> None:
    for path in ("/checkout/static/checkout.css", "/checkout/static/checkout.js", "/"):
        got, head = anon_client.get(path), anon_client.head(path)
        assert got.status_code == head.status_code == 200, (path, head.status_code)
        assert got.content, path
        assert head.content == b"", path
        assert head.headers["content-type"] == got.headers["content-type"], path
        assert head.headers["content-length"] == str(len(got.content)), path
    missing = f"/checkout/{uuid.uuid4()}"
    got, head = anon_client.get(missing), anon_client.head(missing)
    assert got.status_code == head.status_code == 404
    assert head.content == b""


def test_an_api_get_takes_no_head(sandbox: SandboxServer) -> None:
    with signed_client(sandbox.base_url) as client:
        answer = client.head(f"/v1/payments/pay_{uuid.uuid4().hex[:24]}")
    assert answer.status_code == 405
    assert answer.headers["allow"] == "GET"


def test_a_card_charge_by_another_method_charges_nothing(sandbox: SandboxServer) -> None:
    body = charge_body(threeDSecure=False)
    key = str(uuid.uuid4())
    content = json.dumps(body).encode()
    headers = {"Content-Type": "application/json", "Idempotency-Key": key}
    with signed_client(sandbox.base_url) as client:
        for method in METHODS:
            if method in ("POST", "GET"):  # GET is ``/v1/payments/{id}``'s, with id "card"
                continue
            answer = client.request(method, "/v1/payments/card", content=content, headers=headers)
            assert answer.status_code == 405, (method, answer.status_code, answer.text)
            assert answer.headers["allow"] == "GET, POST", method
        # The key and the transactionId are still unused: this is the first charge.
        first = client.post("/v1/payments/card", content=content, headers=headers)
    assert first.status_code == 201, first.text
    assert first.json()["status"] == "captured"


def test_strict_replay_never_sees_another_method(
    sandbox_with: Callable[..., SandboxServer],
) -> None:
    sandbox = sandbox_with(strict_replay=True)
    with signed_client(sandbox.base_url) as client:
        request = client.build_request("OPTIONS", "/v1/payments/card", json=charge_body())
        signed = next(client.auth.auth_flow(request))  # type: ignore[union-attr]
        with httpx2.Client(verify=False, timeout=30) as plain:
            answers = [plain.send(signed) for _ in range(2)]
    assert [a.status_code for a in answers] == [405, 405], [a.text for a in answers]
