"""`workbench sign` reproduces every vector and names the usual mistakes."""

from __future__ import annotations

from typing import Any

import pytest
from click.testing import CliRunner

from tests.vectors import load_vectors
from workbench import signing
from workbench.cli import main

VECTORS = load_vectors()


def _run(args: list[str], secret: str) -> tuple[int, str]:
    runner = CliRunner()
    result = runner.invoke(main, ["sign", *args], env={"WORKBENCH_SECRET_KEY": secret})
    return result.exit_code, result.output


@pytest.mark.parametrize("vector", VECTORS, ids=[v["name"] for v in VECTORS])
def test_sign_reproduces_vector(vector: dict[str, Any], tmp_path: Any) -> None:
    body_file = tmp_path / "body.json"
    body_file.write_bytes(vector["body"].encode("utf-8"))
    args = [vector["method"], vector["url"], "--timestamp", vector["timestamp"]]
    if vector["body"]:
        args += ["--body", f"@{body_file}"]
    code, out = _run([*args, "--expect", vector["signature"]], vector["secret_key"])
    assert code == 0, out
    assert f"X-Signature: {vector['signature']}" in out
    assert vector["body_sha256"] in out
    assert "MATCH" in out
    assert "MISMATCH" not in out
    assert vector["secret_key"] not in out


def test_sign_shows_canonical_lines_escaped() -> None:
    vector = VECTORS[0]
    code, out = _run(
        ["POST", vector["url"], "-t", vector["timestamp"], "-d", vector["body"]],
        vector["secret_key"],
    )
    assert code == 0
    assert '"2026-03-14T09:26:53Z\\nPOST\\n/v1/payments/card\\n' in out
    assert "1 timestamp" in out
    assert "4 body sha256" in out


SECRET = "sk_test_51Hc8kQ2eZvKYlo2C"
TS = "2026-03-14T09:27:00Z"


def _wrong(
    *, ts: str = TS, method: str = "GET", path: str = "/v1/payments/pay_8Jk2mN", body: bytes = b""
) -> str:
    return signing.sign(SECRET, ts, method, path, body)


@pytest.mark.parametrize(
    ("mistake", "args", "bad"),
    [
        ("empty-body-as-object", ["GET", "/v1/payments/pay_8Jk2mN"], _wrong(body=b"{}")),
        ("empty-body-as-null", ["GET", "/v1/payments/pay_8Jk2mN"], _wrong(body=b"null")),
        (
            "query-string-included",
            ["GET", "/v1/subscriptions?status=active&limit=2"],
            _wrong(path="/v1/subscriptions?status=active&limit=2"),
        ),
        ("lowercase-method", ["GET", "/v1/payments/pay_8Jk2mN"], _wrong(method="get")),
        (
            "trailing-slash",
            ["GET", "/v1/payments/pay_8Jk2mN"],
            _wrong(path="/v1/payments/pay_8Jk2mN/"),
        ),
        (
            "timestamp-with-offset",
            ["GET", "/v1/payments/pay_8Jk2mN"],
            _wrong(ts="2026-03-14T09:27:00+00:00"),
        ),
        (
            "full-url-signed",
            ["GET", "https://api.example/v1/payments/pay_8Jk2mN"],
            _wrong(path="https://api.example/v1/payments/pay_8Jk2mN"),
        ),
        (
            "body-reserialized",
            ["POST", "/v1/payments/pay_X1/refund", "-d", '{"amount": 500}'],
            _wrong(method="POST", path="/v1/payments/pay_X1/refund", body=b'{"amount":500}'),
        ),
    ],
)
def test_sign_diagnoses_usual_mistake(mistake: str, args: list[str], bad: str) -> None:
    code, out = _run([*args, "-t", TS, "--expect", bad], SECRET)
    assert code == 1
    assert "MISMATCH" in out
    assert f"reproduced by: {mistake}" in out


def test_sign_unexplained_mismatch() -> None:
    code, out = _run(["GET", "/v1/x", "-t", TS, "--expect", "0" * 64], SECRET)
    assert code == 1
    assert "No usual mistake reproduces it" in out


def test_sign_warns_about_offset_timestamp() -> None:
    code, out = _run(["GET", "/v1/x", "-t", "2026-03-14T12:27:00+03:00"], SECRET)
    assert code == 0
    assert "SVC-GW-1001" in out


def test_sign_default_timestamp_is_now() -> None:
    code, out = _run(["GET", "/v1/x"], SECRET)
    assert code == 0
    line = next(x for x in out.splitlines() if x.startswith("  X-Timestamp: "))
    signing.check_timestamp(line.split(": ", 1)[1])
