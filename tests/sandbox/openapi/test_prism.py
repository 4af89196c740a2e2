"""Prism, the mock server the benchmarks compare against, serves the document as written.

Prism is installed by the benchmarks (``npm ci`` in ``benchmarks/``, which ``make bench``
runs); this test uses it when it is there and never installs it (no network in tests).
"""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Iterator
from typing import Any

import httpx2
import pytest

from tests.paths import ROOT
from tests.ports import free_port
from workbench.config import DEFAULT_API_KEY, DEFAULT_SECRET_KEY
from workbench.sandbox.app import create_app
from workbench.sandbox.openapi import openapi_json
from workbench.sandbox.openapi.examples import REQUESTS, RESPONSES
from workbench.signing import sign_request
from workbench.spec.operations import OPERATIONS

PRISM = ROOT / "benchmarks" / "node_modules" / ".bin" / "prism"
#: A value for each path parameter (Prism checks their shape, not their existence).
PARAMETERS = {
    "id": "pay_01a20cb3ec625f0148aad463",
    "hash": "KNhAcDXMBNYDM_b9vJh5byU8GRsNVR2M",
    "event_id": "evt_01a20cb3ec6366013e1f6835",
    "payment_id": "pay_01a20cb3edcf6f0f9874a8dd",
    "merchant_id": "mrc_01a20cb3edcf6f0f9874a8de",
}


@pytest.fixture(scope="module")
def prism(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Prism mocking the exported document on a free port, rejecting invalid requests."""
    # `make test` installs Prism beside the tests: wait for that install (or make it).
    subprocess.run(["bash", str(ROOT / "scripts" / "ensure-prism")], check=False, timeout=600)
    if not PRISM.exists():
        reason = f"Prism is not installed at {PRISM} (npm ci in benchmarks/ installs it)"
        print(reason)
        pytest.skip(reason)
    document = tmp_path_factory.mktemp("prism") / "openapi.json"
    document.write_text(openapi_json(create_app()), encoding="utf-8")
    port = free_port()
    command = [str(PRISM), "mock", str(document), "-h", "127.0.0.1", "-p", str(port), "--errors"]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                httpx2.get(
                    f"{base}/v1/payments/{PARAMETERS['id']}/public-status", timeout=2, verify=False
                )
                break
            except httpx2.TransportError:
                if process.poll() is not None or time.monotonic() > deadline:
                    output = process.stdout.read().decode() if process.stdout else ""
                    raise RuntimeError(f"Prism did not start:\n{output}") from None
                time.sleep(0.2)
        yield base
    finally:
        process.terminate()
        process.wait(timeout=30)


def _send(base: str, method: str, path: str, body: Any) -> httpx2.Response:
    raw = b"" if body is None else json.dumps(body).encode()
    headers = sign_request(
        api_key=DEFAULT_API_KEY,
        secret_key=DEFAULT_SECRET_KEY,
        method=method,
        url=path.split("?")[0],
        body=raw,
    ).as_dict()
    headers["Content-Type"] = "application/json"
    return httpx2.request(method, base + path, content=raw, headers=headers, timeout=30)


def test_prism_accepts_every_example_and_answers_with_the_documented_one(prism: str) -> None:
    refused = []
    for op in OPERATIONS:
        path = op.path.format(**{k: v for k, v in PARAMETERS.items() if f"{{{k}}}" in op.path})
        if op.operation_id == "getSandboxChallengePage":
            path += "?correlationId=4dc1f6f4-feed-430e-833c-6b4893b13c70"
        answer = _send(prism, op.method, path, REQUESTS.get(op.operation_id, ("", None))[1])
        expected = RESPONSES.get(op.operation_id)
        if not answer.is_success or (expected is not None and answer.json() != expected[2]):
            refused.append((op.operation_id, answer.status_code, answer.text[:200]))
    assert refused == []


def test_prism_refuses_a_request_the_document_forbids(prism: str) -> None:
    body = {k: v for k, v in REQUESTS["chargeCard"][1].items() if k != "amount"}
    answer = _send(prism, "POST", "/v1/payments/card", body)
    assert answer.status_code in (400, 422), answer.text
