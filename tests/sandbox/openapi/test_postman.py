"""``workbench postman``'s collection: every operation, signed as the spec says, run by newman.

newman is pinned by ``tools/newman/package-lock.json``; ``scripts/ensure-newman`` installs
it (``make test`` runs it beside the tests, and the run test runs it too and waits for
that install). Where it cannot be installed the newman tests skip with the reason.
"""

from __future__ import annotations

import json
import subprocess
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx2
import pytest
from click.testing import CliRunner

from tests.paths import ROOT
from tests.ports import free_port
from tests.sandbox.bodies import charge_body
from tests.sandbox.clients import signed_client
from workbench.cli import main
from workbench.config import DEFAULT_SECRET_KEY
from workbench.sandbox import SandboxServer
from workbench.sandbox.openapi import postman as collection
from workbench.sandbox.openapi.postman import (
    STEPS,
    UTF8_VECTOR_BODY,
    postman_collection,
    postman_json,
)
from workbench.spec.operations import OPERATIONS
from workbench.testing import running_sandbox

NEWMAN = ROOT / "tools" / "newman" / "node_modules" / ".bin" / "newman"
VECTORS = ROOT / "tests" / "data" / "signing-vectors.json"


def _requests(document: dict[str, Any]) -> list[dict[str, Any]]:
    return [item for folder in document["item"] for item in folder["item"]]


def test_every_operation_is_a_request_of_the_collection() -> None:
    document = postman_collection()
    sent = set()
    for item in _requests(document):
        request = item["request"]
        path = "/" + "/".join(request["url"]["path"])
        sent.add((request["method"], path))
    for op in OPERATIONS:
        assert any(method == op.method and _matches(op.path, path) for method, path in sent), (
            op.operation_id
        )


def _matches(template: str, path: str) -> bool:
    parts, actual = template.split("/"), path.split("/")
    return len(parts) == len(actual) and all(
        p == a or (p.startswith("{") and a.startswith("{{"))
        for p, a in zip(parts, actual, strict=True)
    )


def test_an_operation_without_a_step_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    folders = tuple(
        (name, tuple(step for step in steps if step.operation_id != "voidPayment"))
        for name, steps in STEPS
    )
    monkeypatch.setattr(collection, "STEPS", folders)
    with pytest.raises(LookupError, match="voidPayment"):
        postman_collection()


def test_the_utf8_request_is_the_spec_vector_byte_for_byte() -> None:
    vector = next(
        v for v in json.loads(VECTORS.read_text("utf-8"))["vectors"] if v["name"] == "utf8-body"
    )
    assert vector["body"] == UTF8_VECTOR_BODY
    bodies = [
        item["request"].get("body", {}).get("raw") for item in _requests(postman_collection())
    ]
    assert vector["body"] in bodies


def test_the_collection_holds_no_key_from_the_environment(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Its keys are empty (a run makes a scratch merchant), whatever the environment says."""
    monkeypatch.setenv("WORKBENCH_API_KEY", "pk_live_from_the_environment")
    monkeypatch.setenv("WORKBENCH_SECRET_KEY", "sk_live_from_the_environment")
    out = tmp_path / "collection.json"
    result = CliRunner().invoke(main, ["postman", "-o", str(out)])
    assert result.exit_code == 0, result.output
    text = out.read_text("utf-8")
    assert "from_the_environment" not in text
    assert text == postman_json()
    variables = {v["key"]: v for v in json.loads(text)["variable"]}
    assert variables["apiKey"]["value"] == ""
    assert variables["secretKey"] == {"key": "secretKey", "value": "", "type": "secret"}
    assert variables["adminToken"] == {"key": "adminToken", "value": "", "type": "secret"}
    assert DEFAULT_SECRET_KEY not in text
    assert variables["baseUrl"]["value"] == "http://127.0.0.1:8765"


def test_the_cli_prints_the_collection_with_the_base_url_given() -> None:
    result = CliRunner().invoke(main, ["postman", "--base-url", "http://sandbox.test:9000"])
    assert result.exit_code == 0, result.output
    document = json.loads(result.output)
    assert document["info"]["schema"] == collection.SCHEMA
    baseurl = next(v for v in document["variable"] if v["key"] == "baseUrl")
    assert baseurl["value"] == "http://sandbox.test:9000"


# --- newman against a fresh sandbox -------------------------------------------------------


@pytest.fixture(scope="module")
def newman() -> str:
    # `make test` installs newman beside the tests: wait for that install (or make it).
    subprocess.run(["bash", str(ROOT / "scripts" / "ensure-newman")], check=False, timeout=600)
    if not NEWMAN.exists():
        reason = f"newman is not installed at {NEWMAN} (scripts/ensure-newman installs it)"
        print(reason)
        pytest.skip(reason)
    return str(NEWMAN)


@pytest.fixture
def sandbox() -> Iterator[SandboxServer]:
    with running_sandbox(rate_limit_per_second=0) as server:
        yield server


def _run_newman(
    newman: str,
    base_url: str,
    tmp_path: Path,
    *extra: str,
    api_key: str = "",
    secret: str = "",
) -> tuple[subprocess.CompletedProcess[str], list[dict[str, Any]]]:
    """Run the collection as the guide says, keys and address given as environment values
    (empty ones, as an unset ``$WORKBENCH_API_KEY`` gives, unless keys are given)."""
    document = tmp_path / "collection.json"
    document.write_text(postman_json(), encoding="utf-8")
    report = tmp_path / "report.json"
    command = [
        newman,
        "run",
        str(document),
        "--env-var",
        f"baseUrl={base_url}",
        "--env-var",
        f"apiKey={api_key}",
        "--env-var",
        f"secretKey={secret}",
        # Nothing listens there: the sandbox's deliveries fail at once, off the network.
        "--env-var",
        f"webhookUrl=http://127.0.0.1:{free_port()}/webhooks",
        "--reporters",
        "cli,json",
        "--reporter-json-export",
        str(report),
        "--color",
        "off",
        *extra,
    ]
    result = subprocess.run(command, capture_output=True, text=True, timeout=300, check=False)
    executions = json.loads(report.read_text("utf-8"))["run"]["executions"]
    return result, executions


def _answer(execution: dict[str, Any]) -> tuple[int, Any]:
    response = execution["response"]
    raw = bytes(response["stream"]["data"]).decode("utf-8")
    try:
        return response["code"], json.loads(raw)
    except ValueError:
        return response["code"], raw


def test_newman_runs_every_request_against_a_fresh_sandbox(
    newman: str, sandbox: SandboxServer, tmp_path: Path
) -> None:
    """No keys given: every request runs, in a scratch merchant made by the first one."""
    result, executions = _run_newman(newman, sandbox.base_url, tmp_path)
    print(result.stdout[-6000:])  # what ran, shown with -s and on failure
    steps = [step for _, steps in STEPS for step in steps]
    assert [e["item"]["name"] for e in executions] == [s.name for s in steps]
    failed = [
        (e["item"]["name"], a["assertion"], a["error"]["message"])
        for e in executions
        for a in e.get("assertions", [])
        if a.get("error")
    ]
    # The UTF-8 vector: the signature over its multi-byte body is accepted and the
    # session with the non-ASCII transactionId is created (a fresh sandbox: 201, not 200).
    utf8 = next(e for e in executions if "UTF-8" in e["item"]["name"])
    code, body = _answer(utf8)
    assert code == 201, body
    assert body["status"] == "active", body
    assert failed == []
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr
    signed = [
        e for e in executions if any(h["key"] == "X-Signature" for h in e["request"]["header"])
    ]
    unsigned = {e["item"]["name"] for e in executions} - {e["item"]["name"] for e in signed}
    assert unsigned == {
        "Make a scratch merchant (when no keys are given)",
        "Merchants of this sandbox (no secrets)",
        "Public status (unsigned)",
        "The challenge page (sandbox ACS, HTML)",
        "Answer the challenge (sandbox ACS)",
        "What the buyer sees (unsigned)",
        "Start a card update (unsigned)",
        "Cancel at the period's end (unsigned)",
    }
    for execution in executions:
        headers = {h["key"]: h["value"] for h in execution["request"]["header"]}
        if execution["request"]["method"] == "POST":
            assert _is_uuid4(headers["Idempotency-Key"]), execution["item"]["name"]
        assert _is_uuid4(headers["X-Request-Id"]), execution["item"]["name"]


def _is_uuid4(value: str) -> bool:
    try:
        return uuid.UUID(value).version == 4 and str(uuid.UUID(value)) == value.lower()
    except ValueError:
        return False


def test_newman_with_the_wrong_secret_is_refused_with_svc_gw_1002(
    newman: str, sandbox: SandboxServer, tmp_path: Path
) -> None:
    """The signatures are what the sandbox checks: another secret key is refused."""
    result, executions = _run_newman(
        newman,
        sandbox.base_url,
        tmp_path,
        "--folder",
        "Checkout sessions",
        api_key=sandbox.config.api_key,
        secret="sk_test_not_it",
    )
    assert result.returncode != 0
    answers = [_answer(e) for e in executions]
    assert [(code, body["code"]) for code, body in answers] == [(401, "SVC-GW-1002")] * 2


def _scratch_merchants(base_url: str) -> list[str]:
    items = httpx2.get(f"{base_url}/sandbox/merchants", timeout=30).json()["items"]
    return [m["merchantId"] for m in items if not m["builtIn"]]


def test_newman_with_keys_given_resets_and_deletes_nothing_of_that_merchant(
    newman: str, sandbox: SandboxServer, tmp_path: Path
) -> None:
    config = sandbox.config
    with signed_client(sandbox.base_url) as demo:
        before = demo.post("/v1/payments/card", json=charge_body()).json()["paymentId"]
    result, executions = _run_newman(
        newman, sandbox.base_url, tmp_path, api_key=config.api_key, secret=config.secret_key
    )
    print(result.stdout[-4000:])
    ran = [e["item"]["name"] for e in executions if not e.get("skipped")]
    scratch = [s.name for _, steps in STEPS for s in steps if s.scratch_only]
    assert scratch
    assert not set(scratch) & set(ran)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr
    assert _scratch_merchants(sandbox.base_url) == []
    with signed_client(sandbox.base_url) as demo:
        assert demo.get(f"/v1/payments/{before}").json()["status"] == "captured"


# The two-worker sandboxes of this module run no reconciler (the run ticks it itself).
RECONCILER = False


def _clock_offset(client: httpx2.Client) -> float:
    moment = client.get("/sandbox/fixtures").json()["businessTime"]
    business = datetime.fromisoformat(moment.replace("Z", "+00:00"))
    return (business - datetime.now(UTC)).total_seconds()


def test_newman_without_keys_leaves_the_demo_merchant_as_it_was(
    newman: str, workers: tuple[str, str, int], tmp_path: Path
) -> None:
    """The guide's command as pasted with no keys set, on two workers: the demo
    merchant's payment and clock are as they were, the scratch merchant is gone."""
    base, _, _ = workers
    with signed_client(base) as demo:
        made = demo.post("/v1/payments/card", json=charge_body()).json()["paymentId"]
        payment = demo.get(f"/v1/payments/{made}").json()
        offset = _clock_offset(demo)
        result, executions = _run_newman(newman, base, tmp_path)
        print(result.stdout[-4000:])
        assert result.returncode == 0, result.stdout[-4000:] + result.stderr
        assert len(executions) == sum(len(steps) for _, steps in STEPS)
        assert demo.get(f"/v1/payments/{made}").json() == payment
        assert abs(_clock_offset(demo) - offset) < 60  # the run advanced its clock 25 hours
    made = next(e for e in executions if e["item"]["name"].startswith("Make a scratch"))
    merchant = _answer(made)[1]["merchantId"]
    assert merchant not in _scratch_merchants(base)
