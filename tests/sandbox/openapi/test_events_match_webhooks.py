"""Every event the sandbox delivers matches the OpenAPI document's ``webhooks`` section.

A realistic run makes every event type there is (each `workbench.triggers` trigger, on
one sandbox, one after another, the clock moving under earlier objects too); each
delivery the receiver got is checked, body and headers, against the schema the served
``/openapi.json`` gives its type, closed: a field the document does not name fails. The
client's typed events read every one of them.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from typing import Any

import httpx2
import jsonschema
import pytest

from workbench._client import Client
from workbench.config import DEFAULT_API_KEY, DEFAULT_SECRET_KEY
from workbench.spec.events import EVENT_TYPES
from workbench.testing import running_sandbox
from workbench.triggers import TRIGGERS, trigger
from workbench.webhooks import EVENT_CLASSES, WebhookListener, parse_event

#: Reconciler passes to let every pending delivery go out (one event of an object a
#: pass): a guard against a hang, not a measured figure.
MAX_PASSES = 40


def _closed(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` refusing properties it does not name (the document leaves room for new ones)."""
    closed = dict(schema)
    closed["additionalProperties"] = False
    return closed


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[dict[str, Any], list[Any]]]:
    """The served document, and every delivery of a run through every trigger."""
    folder = tmp_path_factory.mktemp("events-contract")
    with running_sandbox(db_dir=folder, run_reconciler_in_background=False) as server:
        document = httpx2.get(f"{server.base_url}/openapi.json", timeout=30).json()
        with Client(DEFAULT_API_KEY, DEFAULT_SECRET_KEY, server.base_url) as client:
            secret = client.sandbox.fixtures().webhook_secret
            assert secret
            with WebhookListener(secret) as listener:
                client.sandbox.reset()
                client.sandbox.set_webhook(listener.url)
                for name in TRIGGERS:
                    trigger(client, name)
                for _ in range(MAX_PASSES):
                    states = {e.delivery.get("state") for e in client.sandbox.events().items}
                    if "pending" not in states:
                        break
                    client.sandbox.tick()
                assert {e.delivery.get("state") for e in client.sandbox.events().items} == {
                    "delivered"
                }
                yield document, [request for request, _status in listener.received]


def _validator(document: dict[str, Any], event_type: str) -> jsonschema.Draft202012Validator:
    components = copy.deepcopy(document["components"])
    hook = document["webhooks"][event_type]["post"]
    ref = hook["requestBody"]["content"]["application/json"]["schema"]["$ref"]
    envelope = ref.rsplit("/", 1)[-1]
    data = components["schemas"][envelope]["properties"]["data"]["$ref"].rsplit("/", 1)[-1]
    for name in (envelope, data):
        components["schemas"][name] = _closed(components["schemas"][name])
    schema = {"$ref": ref, "components": components}
    return jsonschema.Draft202012Validator(
        schema, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER
    )


def test_the_run_delivered_every_event_type_the_sandbox_sends(
    run: tuple[dict[str, Any], list[Any]],
) -> None:
    document, received = run
    delivered = {json.loads(r.body)["type"] for r in received}
    assert delivered == set(EVENT_TYPES) == set(document["webhooks"]) == set(TRIGGERS)


def test_every_delivered_body_matches_its_webhook_schema(
    run: tuple[dict[str, Any], list[Any]],
) -> None:
    document, received = run
    failures = []
    for request in received:
        body = json.loads(request.body)
        errors = list(_validator(document, body["type"]).iter_errors(body))
        failures += [f"{body['type']} {list(e.absolute_path)}: {e.message}" for e in errors]
    assert failures == []
    assert len(received) > len(EVENT_TYPES)


def test_every_delivered_body_parses_to_its_typed_event(
    run: tuple[dict[str, Any], list[Any]],
) -> None:
    """The client reads each with its type's class: no delivery falls back to untyped."""
    _document, received = run
    for request in received:
        event = parse_event(request.body)
        assert type(event) is EVENT_CLASSES[event.type], event.type
        assert event.data.wire() == json.loads(request.body)["data"]


def test_every_delivery_carries_the_headers_its_webhook_names(
    run: tuple[dict[str, Any], list[Any]],
) -> None:
    document, received = run
    failures = []
    for request in received:
        event_type = json.loads(request.body)["type"]
        for parameter in document["webhooks"][event_type]["post"]["parameters"]:
            value: Any = request.headers.get(parameter["name"].lower())
            if value is None:
                failures.append(f"{event_type}: no {parameter['name']}")
                continue
            if parameter["schema"].get("type") == "integer":
                value = int(value)
            errors = list(jsonschema.Draft202012Validator(parameter["schema"]).iter_errors(value))
            failures += [f"{event_type} {parameter['name']}: {e.message}" for e in errors]
    assert failures == []


def test_a_field_the_document_does_not_name_is_caught(
    run: tuple[dict[str, Any], list[Any]],
) -> None:
    """The check above can fail: an undocumented field, a float amount, a missing id."""
    document, received = run
    body = json.loads(next(r.body for r in received if b'"payment.captured"' in r.body))
    validator = _validator(document, "payment.captured")
    assert validator.is_valid(body)
    for change in (
        lambda b: b["data"].update(cardNumber="4111111111111111"),
        lambda b: b["data"].update(amount=150.5),
        lambda b: b["data"].pop("paymentId"),
        lambda b: b.update(type="payment.voided"),
    ):
        broken = copy.deepcopy(body)
        change(broken)
        assert not validator.is_valid(broken), broken


def test_the_examples_match_their_own_schemas(run: tuple[dict[str, Any], list[Any]]) -> None:
    document, _received = run
    for name, hook in document["webhooks"].items():
        content = hook["post"]["requestBody"]["content"]["application/json"]
        [example] = content["examples"].values()
        errors = list(_validator(document, name).iter_errors(example["value"]))
        assert errors == [], (name, errors)
