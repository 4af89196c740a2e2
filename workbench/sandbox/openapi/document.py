"""The sandbox's OpenAPI document, made to be handed to tools.

FastAPI writes the paths and schemas from the routes; this module gives each operation
its stable ``operationId`` and its area's tag (`workbench.spec.operations`), lists the
operations in that table's order (whichever feature's router serves them), examples
made of the fixtures (`workbench.sandbox.openapi.examples`), the signing headers as
security schemes and the ``webhooks`` section, one per event type the sandbox sends
(`workbench.sandbox.openapi.webhooks`), and drops FastAPI's 422 answers, which the
sandbox never gives (validation failures are 400 in the error envelope). ``workbench
openapi`` prints it; the guide's ``openapi.json`` is the same document.

Error envelopes are documented as JSON on every route (on an HTML page's route FastAPI
would document them as HTML).
"""

from __future__ import annotations

import copy
import json
from typing import Any

from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi

from workbench.sandbox.openapi.examples import REQUESTS, RESPONSES
from workbench.sandbox.openapi.webhooks import add_webhooks
from workbench.spec.ids import UUID4_PATTERN
from workbench.spec.limits import IDEMPOTENCY_TTL_SECONDS
from workbench.spec.operations import OPERATIONS, TAGS, operation

__all__ = ["SECURITY_SCHEMES", "openapi_document", "openapi_json"]

#: The three signed-request headers, as OpenAPI security schemes.
SECURITY_SCHEMES: dict[str, dict[str, str]] = {
    "ApiKey": {"type": "apiKey", "in": "header", "name": "X-Api-Key"},
    "Signature": {
        "type": "apiKey",
        "in": "header",
        "name": "X-Signature",
        "description": "HMAC-SHA256 of the canonical string, lowercase hex",
    },
    "Timestamp": {
        "type": "apiKey",
        "in": "header",
        "name": "X-Timestamp",
        "description": "ISO 8601 UTC ending in Z, within 5 minutes",
    },
    "AdminToken": {
        "type": "http",
        "scheme": "bearer",
        "description": "The sandbox's admin token: needed to make, list or delete merchants "
        "(and reset a built-in one) only on a sandbox reachable beyond loopback",
    },
}

_JSON = "application/json"


def _json_content(owner: dict[str, Any], where: str) -> dict[str, Any]:
    try:
        content: dict[str, Any] = owner["content"][_JSON]
    except KeyError:
        raise ValueError(f"{where} has no {_JSON} content to give an example") from None
    return content


def _envelope_as_json(answer: dict[str, Any]) -> None:
    """An error envelope is JSON on every route, an HTML page's included.

    FastAPI gives a route's extra responses the route's own media type.
    """
    content = answer.get("content", {})
    html = content.get("text/html", {})
    if html.get("schema", {}).get("$ref", "").endswith("/ErrorEnvelope"):
        content[_JSON] = content.pop("text/html")


def _add_examples(operation_id: str, item: dict[str, Any]) -> None:
    if operation_id in REQUESTS:
        summary, value = REQUESTS[operation_id]
        body = _json_content(item.get("requestBody", {}), f"{operation_id}'s request")
        body["examples"] = {"fixtures": {"summary": summary, "value": value}}
    if operation_id in RESPONSES:
        status, summary, value = RESPONSES[operation_id]
        answers = item["responses"]
        content = _json_content(answers.get(str(status), {}), f"{operation_id}'s {status}")
        content["examples"] = {"fixtures": {"summary": summary, "value": value}}
        # A creation's 200 (the transactionId fence finding the object made before) is
        # the same object; mock servers answer with the lowest success status.
        fence = answers.get("200", {}).get("content", {}).get(_JSON, {})
        if status == 201 and fence.get("schema") == content.get("schema"):
            fence["examples"] = content["examples"]


#: Where each operation comes in the document: its row in `OPERATIONS`.
_PLACE = {(op.method.lower(), op.path): place for place, op in enumerate(OPERATIONS)}


def _in_table_order(paths: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """``paths`` with the operations in `OPERATIONS`'s order (any other last, as found)."""

    def place(path: str, method: str) -> int:
        return _PLACE.get((method, path), len(_PLACE))

    ordered = {
        path: dict(sorted(methods.items(), key=lambda item: place(path, item[0])))
        for path, methods in paths.items()
    }
    return dict(sorted(ordered.items(), key=lambda item: min(place(item[0], m) for m in item[1])))


_UUID4_SCHEMA: dict[str, Any] = {"type": "string", "format": "uuid", "pattern": UUID4_PATTERN}
#: The rules `workbench.sandbox.idempotency` applies to a key, as a client reads them.
IDEMPOTENCY_KEY_RULES = (
    "A UUID v4 (any other value is 400 SVC-GW-4000); a retry sends the same one. A key "
    "belongs to one API key, method and path. For "
    f"{IDEMPOTENCY_TTL_SECONDS // 3600} hours after the first answer, the same key with the "
    "same payload (the same field values, whatever their order or whitespace) is answered "
    "with the first answer's status, body and X-Request-Id verbatim, plus the header "
    "`Idempotent-Replayed: true`, and nothing is done again (a 202 refund's replay reports "
    "the refund as it is now); the same key with a different payload is 409 SVC-GW-2001; "
    "a key whose first request is still being processed is 409 SVC-GW-2002 (retry). "
    "Refusals by the service's rules (a decline, a state conflict, an amount over "
    "refundableAmount) are answers like any other and replayed; a request refused before "
    "them (authentication, an invalid body, not found, a rate limit, a 5xx) is not "
    "remembered, so a fixed one may reuse its key. After the 24 hours the key is forgotten."
)

_REQUEST_ID = {
    "name": "X-Request-Id",
    "in": "header",
    "required": False,
    "description": "A UUID v4, echoed back (and as `requestId` in an error); generated when "
    "omitted. Any other value is 400 SVC-GW-4000.",
    "schema": _UUID4_SCHEMA,
}


def _uuid4_headers(item: dict[str, Any]) -> None:
    """Both headers the spec gives the format "UUID v4": ``Idempotency-Key`` where a route
    takes it, ``X-Request-Id`` on every route (its middleware reads it on every request).
    The routes declare the key leniently so the sandbox's own check answers a bad one
    (400 SVC-GW-4000 naming the header, not a validation error of FastAPI's)."""
    parameters: list[dict[str, Any]] = item.setdefault("parameters", [])
    for parameter in parameters:
        if parameter.get("in") == "header" and parameter.get("name") == "Idempotency-Key":
            parameter["schema"] = dict(_UUID4_SCHEMA)
            parameter["description"] = IDEMPOTENCY_KEY_RULES
    if not any(p.get("in") == "header" and p.get("name") == "X-Request-Id" for p in parameters):
        parameters.append(dict(_REQUEST_ID, schema=dict(_UUID4_SCHEMA)))


#: The document of `create_app`'s own routes, once this process has built it. Every app
#: built without routers of the caller's has the same routes (module-level routers), and
#: a document costs about 0.4 s of CPU to build: the tests build hundreds of apps.
_STANDARD: list[dict[str, Any]] = []


def openapi_document(app: FastAPI, *, standard: bool = False) -> dict[str, Any]:
    """The OpenAPI document of ``app``, a sandbox app built by `create_app`.

    Args:
        app: the app.
        standard: ``app`` holds only `create_app`'s own routes, whose document is then
            built once per process; each call answers a copy of its own.

    Raises:
        LookupError: a route is missing from `workbench.spec.operations.OPERATIONS`.
    """
    if not standard:
        return _build(app)
    if not _STANDARD:
        _STANDARD.append(_build(app))  # two threads at once: both build, the first is kept
    return copy.deepcopy(_STANDARD[0])


def _build(app: FastAPI) -> dict[str, Any]:
    document = get_openapi(
        title=app.title,
        version=app.version,
        description=app.description,
        routes=app.routes,
        tags=[{"name": name, "description": text} for name, text in TAGS.items()],
    )
    document["paths"] = _in_table_order(document.get("paths", {}))
    components = document.setdefault("components", {})
    components["securitySchemes"] = SECURITY_SCHEMES
    for path, methods in document.get("paths", {}).items():
        for method, item in methods.items():
            found = operation(method, path)
            item["operationId"] = found.operation_id
            item["tags"] = [found.tag]
            item.get("responses", {}).pop("422", None)
            for answer in item.get("responses", {}).values():
                _envelope_as_json(answer)
            _add_examples(found.operation_id, item)
            _uuid4_headers(item)
    for name in ("HTTPValidationError", "ValidationError"):
        components.get("schemas", {}).pop(name, None)
    add_webhooks(document)
    return document


def openapi_json(app: FastAPI) -> str:
    """The document as ``workbench openapi`` prints it and the guide stores it.

    Args:
        app: a sandbox app (one built with the default configuration will do: building
            it touches nothing, and the document needs no database).
    """
    return json.dumps(app.openapi(), indent=2) + "\n"
