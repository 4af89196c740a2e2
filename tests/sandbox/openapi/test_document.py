"""The OpenAPI document tools are handed: valid, named by the spec, tagged, with working examples.

``workbench openapi`` prints it; the guide's ``docs/reference/openapi.json`` is the same
text (tests/docs checks the guide's copy is current).
"""

from __future__ import annotations

import copy
import json
import re
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest
import schemathesis
from click.testing import CliRunner
from fastapi import APIRouter
from pydantic import BaseModel

from tests.sandbox.clients import signed_client
from workbench.cli import main
from workbench.sandbox import SandboxConfig, create_app
from workbench.sandbox.openapi import openapi_json
from workbench.sandbox.openapi.examples import REQUESTS, RESPONSES
from workbench.spec import PAYMENT, REFUND, SESSION, SUBSCRIPTION, UUID4_PATTERN
from workbench.spec.limits import IDEMPOTENCY_TTL_SECONDS
from workbench.spec.operations import OPERATIONS, TAGS
from workbench.testing import running_sandbox

METHODS = ("get", "post", "put", "patch", "delete")
#: Readable names start with what they do.
VERBS = (
    "advance|answer|cancel|capture|charge|complete|create|fail|get|list|pause|refund|reset"
    "|resume|retry|run|set|settle|void|delete"
)
NAME = re.compile(rf"^({VERBS})([A-Z][a-z0-9]*|3DS)+$")


@pytest.fixture(scope="module")
def document() -> dict[str, Any]:
    """The document as ``workbench openapi`` prints it."""
    result = CliRunner().invoke(main, ["openapi"])
    assert result.exit_code == 0, result.output
    found: dict[str, Any] = json.loads(result.output)
    return found


def _operations(document: dict[str, Any]) -> Iterator[tuple[str, str, dict[str, Any]]]:
    for path, item in document["paths"].items():
        for method in METHODS:
            if method in item:
                yield method.upper(), path, item[method]


def test_the_document_is_valid_openapi(document: dict[str, Any]) -> None:
    schemathesis.openapi.from_dict(document).validate()

    broken = copy.deepcopy(document)  # the validator does catch a broken document
    broken["paths"]["/v1/payments/card"]["post"]["responses"] = "none"
    with pytest.raises(Exception, match="is not of type"):
        schemathesis.openapi.from_dict(broken).validate()


def test_the_export_is_the_document_the_app_serves_and_the_guide_stores(
    document: dict[str, Any], tmp_path: Path
) -> None:
    app = create_app(SandboxConfig(db_url="sqlite://"))
    assert document == app.openapi()
    out = tmp_path / "openapi.json"
    assert CliRunner().invoke(main, ["openapi", "--output", str(out)]).exit_code == 0
    assert out.read_text(encoding="utf-8") == openapi_json(create_app())
    assert openapi_json(create_app()) == json.dumps(document, indent=2) + "\n"


def test_operation_ids_are_the_spec_tables_unique_and_readable(document: dict[str, Any]) -> None:
    served = {(method, path): item["operationId"] for method, path, item in _operations(document)}
    listed = {(op.method, op.path): op.operation_id for op in OPERATIONS}

    assert served == listed  # every route named, no stale row
    ids = list(served.values())
    assert len(ids) == len(set(ids))
    unreadable = [name for name in ids if not NAME.match(name)]
    assert unreadable == []
    # Every endpoint the spec's state tables name is a spec row.
    spec_rows = {f"{op.method} {op.path}" for op in OPERATIONS if op.origin == "spec"}
    triggers = {
        t.trigger
        for machine in (PAYMENT, REFUND, SESSION, SUBSCRIPTION)
        for t in machine.transitions
        if t.trigger.split(" ")[0] in ("GET", "POST")
    }
    assert triggers <= spec_rows
    assert all(not op.path.startswith("/sandbox/") for op in OPERATIONS if op.origin == "spec")


def test_the_document_lists_the_operations_in_the_tables_order(document: dict[str, Any]) -> None:
    listed = [(method.upper(), path) for path, item in document["paths"].items() for method in item]
    assert listed == [(op.method, op.path) for op in OPERATIONS]


def test_every_operation_has_one_described_tag(document: dict[str, Any]) -> None:
    declared = {tag["name"]: tag.get("description") for tag in document["tags"]}
    assert declared == TAGS
    used = {item["tags"][0] for _, _, item in _operations(document)}
    assert all(len(item["tags"]) == 1 for _, _, item in _operations(document))
    assert used == set(TAGS)


def _models() -> dict[str, type[BaseModel]]:
    """Every pydantic model the sandbox's modules define, by name (the app imported them)."""
    found: dict[str, type[BaseModel]] = {}
    for name, module in list(sys.modules.items()):
        if name != "workbench.sandbox" and not name.startswith("workbench.sandbox."):
            continue
        for value in vars(module).values():
            if (
                isinstance(value, type)
                and issubclass(value, BaseModel)
                and value.__module__.startswith("workbench.sandbox")
            ):
                found[value.__name__] = value
    return found


def _ref(schema: Any) -> str | None:
    """The component a schema names (through ``anyOf`` with null, for optional bodies)."""
    if isinstance(schema, dict):
        if "$ref" in schema:
            return str(schema["$ref"]).rsplit("/", 1)[-1]
        for option in schema.get("anyOf", []):
            found = _ref(option)
            if found:
                return found
    return None


def _example(content: dict[str, Any]) -> Any:
    return content["examples"]["fixtures"]["value"]


def test_examples_cover_every_body_and_match_its_model(document: dict[str, Any]) -> None:
    models = _models()
    requests = 0
    answered: set[str] = set()
    for method, path, item in _operations(document):
        name = item["operationId"]
        body = item.get("requestBody", {}).get("content", {}).get("application/json")
        if body is not None:
            assert "examples" in body, f"{name} has no request example"
            model = models[_ref(body["schema"]) or ""]
            model.model_validate_json(json.dumps(_example(body)))  # as strict as the route
            requests += 1
        success = [s for s in item["responses"] if s.startswith("2")]
        for status in success:
            content = item["responses"][status].get("content", {}).get("application/json", {})
            if "examples" in content:
                model = models[_ref(content["schema"]) or ""]
                model.model_validate(_example(content))
                answered.add(name)
        if name in RESPONSES:
            assert str(RESPONSES[name][0]) in success, f"{method} {path}"
    assert requests == len(REQUESTS)
    assert answered == set(RESPONSES)


def _shape(value: Any) -> Any:
    """A JSON value's keys and types, not its values (ids and times change per run)."""
    if isinstance(value, dict):
        return {key: _shape(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_shape(value[0])] if value else []
    return type(value).__name__


def test_request_examples_get_the_documented_answers_from_a_fresh_sandbox() -> None:
    by_id = {op.operation_id: op for op in OPERATIONS}
    called: set[str] = set()
    with (
        running_sandbox(run_reconciler_in_background=False) as server,
        signed_client(server.base_url) as signed,
        httpx2.Client(base_url=server.base_url, timeout=30, verify=False) as public,
    ):

        def call(
            name: str, client: httpx2.Client = signed, body: Any = None, **ids: str
        ) -> dict[str, Any]:
            op = by_id[name]
            sent = body if body is not None else REQUESTS.get(name, ("", None))[1]
            answer = client.request(op.method, op.path.format(**ids), json=sent)
            called.add(name)
            if name not in RESPONSES:
                assert answer.status_code == 200, (name, answer.text)
                return {}
            status, _, expected = RESPONSES[name]
            assert answer.status_code == status, (name, answer.text)
            assert _shape(answer.json()) == _shape(expected), name
            got: dict[str, Any] = answer.json()
            return got

        def charge(token: str, **extra: Any) -> dict[str, Any]:
            body = {**REQUESTS["chargeCard"][1], "cardToken": token, **extra}
            body["transactionId"] = f"order-{uuid.uuid4().hex}"
            answer = signed.post("/v1/payments/card", json=body)
            assert answer.status_code == 201, answer.text
            got: dict[str, Any] = answer.json()
            return got

        call("createCheckoutSession")
        paid = call("chargeCard")["paymentId"]
        call("getPayment", id=paid)
        call("getPaymentPublicStatus", public, id=paid)
        call("refundPayment", id=paid)
        call("capturePayment", id=charge("tok_test_success", capture=False)["paymentId"])
        call("voidPayment", id=charge("tok_test_success", capture=False)["paymentId"])
        challenged = charge("tok_test_3ds_challenge")
        ids = {"payment_id": challenged["paymentId"]}
        page = public.get(challenged["acsUrl"])  # the page's path, and the correlationId
        assert page.status_code == 200
        called.add("getSandboxChallengePage")
        answer = {**REQUESTS["answerSandboxChallenge"][1]}
        answer["correlationId"] = challenged["correlationId"]
        pares = call("answerSandboxChallenge", public, answer, **ids)
        callback = {key: pares[key] for key in REQUESTS["completeThreeDSChallenge"][1]}
        call("completeThreeDSChallenge", body=callback, id=challenged["paymentId"])
        call("createCardToken")

        sub = call("createSubscription")
        call("listSubscriptions")
        call("getSubscription", id=sub["id"])
        call("pauseSubscription", id=sub["id"])
        call("resumeSubscription", id=sub["id"])
        call("getPortalSubscription", public, hash=sub["publicHash"])
        call("cancelPortalSubscription", public, hash=sub["publicHash"])
        call("createPortalCardUpdateSession", public, hash=sub["publicHash"])
        call("chargeSubscriptionNow", id=call("createSubscription")["id"])
        call("cancelSubscription", id=call("createSubscription")["id"])
        # A renewal on a card that fails it: the subscription goes past_due.
        failing = {**REQUESTS["createSubscription"][1], "customerId": "cus_demo_mehmet"}
        late = call("createSubscription", body=failing)
        assert signed.post("/sandbox/clock/advance", json={"seconds": 32 * 86400}).is_success
        call("listSubscriptionCharges", id=late["id"])
        call("retrySubscription", id=late["id"])

        for name in ("getSandboxFixtures", "advanceSandboxClock", "runSandboxReconciler"):
            call(name)
        call("settleSandboxRefunds")
        events = signed.get("/sandbox/events").json()["items"]
        call("listSandboxEvents")
        call("listSandboxEventDeliveries", event_id=events[0]["id"])
        for name in (
            "setSandboxLatency",
            "setSandboxRateLimit",
            "setSandboxAuthorizationLifetime",
            "setSandboxWebhook",
        ):
            call(name)
        call("resetSandboxMerchant")
        made = call("createSandboxMerchant", public)
        call("listSandboxMerchants", public)
        call("deleteSandboxMerchant", public, merchant_id=made["merchantId"])
        call("failNextSandboxRequest")  # last: the next request would fail

    assert called == set(by_id)


def test_both_uuid4_headers_are_documented_as_uuid4(document: dict[str, Any]) -> None:
    """Idempotency-Key and X-Request-Id are UUID v4 (the spec's header table),
    and an error's ``requestId`` is one too."""
    keyed = 0
    for method, path, operation in _operations(document):
        headers = {p["name"]: p for p in operation.get("parameters", []) if p["in"] == "header"}
        assert "X-Request-Id" in headers, (method, path)
        for name in ("X-Request-Id", "Idempotency-Key"):
            if name in headers:
                schema = headers[name]["schema"]
                assert schema["format"] == "uuid", (method, path, name)
                assert schema["pattern"] == UUID4_PATTERN, (method, path, name)
                assert "UUID v4" in headers[name]["description"]
        keyed += "Idempotency-Key" in headers
    assert keyed >= 20
    envelope = document["components"]["schemas"]["ErrorEnvelope"]["properties"]["requestId"]
    assert (envelope["format"], envelope["pattern"]) == ("uuid", UUID4_PATTERN)


def test_idempotency_key_rules_are_stated_where_the_key_is_taken(
    document: dict[str, Any],
) -> None:
    """The document says what the server does with a key, on every route that
    takes one: the 24-hour window, verbatim replay marked Idempotent-Replayed, 409
    SVC-GW-2001 on another payload, UUID v4."""
    keyed = 0
    for method, path, operation in _operations(document):
        for parameter in operation.get("parameters", []):
            if parameter["in"] == "header" and parameter["name"] == "Idempotency-Key":
                text = parameter["description"]
                for rule in (
                    "UUID v4",
                    f"{IDEMPOTENCY_TTL_SECONDS // 3600} hours",
                    "verbatim",
                    "Idempotent-Replayed: true",
                    "409 SVC-GW-2001",
                ):
                    assert rule in text, (method, path, rule)
                keyed += 1
    assert keyed >= 20


def test_apps_with_the_same_routes_share_one_build_and_each_gets_a_copy() -> None:
    first, second = create_app().openapi(), create_app(SandboxConfig(latency_ms=5)).openapi()
    assert first == second
    assert first is not second
    first["paths"].clear()  # one app's document changed leaves the next app's whole
    assert create_app().openapi() == second


def test_an_app_with_another_route_gets_a_document_of_its_own() -> None:
    extra = APIRouter()

    @extra.get("/v1/not-in-the-table")
    def nowhere() -> dict[str, str]:
        return {}

    create_app().openapi()  # the usual routes' document, built
    with pytest.raises(LookupError):  # built again: this route is in no operations table
        create_app(routers=[extra]).openapi()
