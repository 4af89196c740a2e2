"""The OpenAPI document's ``webhooks`` section: every event type the sandbox sends.

Generated from `workbench.spec.events`, the definitions `workbench.sandbox.events.emit`
builds every event's ``data`` through: one webhook per event type (OpenAPI 3.1), whose
request body is the event's envelope with its ``data`` schema, an example made of the
definition's own example, and the delivery headers; the answer the sender wants is any
2xx. The schemas go under ``components/schemas`` as ``<Name>Event`` (the envelope) and
``<Name>Data`` (its ``data``), so a generator names one type per event.
"""

from __future__ import annotations

from typing import Any

from workbench.sandbox.config import SandboxConfig
from workbench.sandbox.events import RETRY_DELAYS
from workbench.sandbox.fixtures import DEMO_MERCHANT_ID
from workbench.spec.events import EVENT_TYPES, EventType
from workbench.spec.ids import IdPrefix

__all__ = ["add_webhooks"]

_REF = "#/components/schemas/"
_JSON = "application/json"
_EVENT_ID = "evt_01a20cb3f2b4c8d9e0a1b2c3"
_CREATED_AT = "2026-11-24T08:37:27Z"


def _span(seconds: int) -> str:
    return f"{seconds // 60} min" if seconds >= 60 else f"{seconds} s"


def _retries() -> str:
    defaults = SandboxConfig()
    delays = ", ".join(_span(s) for s in RETRY_DELAYS)
    return (
        f"Answer any 2xx within {defaults.webhook_timeout_seconds:g} s. Any other answer, a "
        f"network error or no whole answer in time is retried {delays} after the previous "
        f"attempt, on the merchant's business clock; after {defaults.webhook_max_attempts} "
        "attempts the event is marked failed. Delivery is at least once: de-duplicate on "
        "`X-Event-Id`."
    )


def _header(name: str, description: str, schema: dict[str, Any]) -> dict[str, Any]:
    return {
        "name": name,
        "in": "header",
        "required": True,
        "description": description,
        "schema": schema,
    }


def _headers(name: str) -> list[dict[str, Any]]:
    return [
        _header(
            "X-Timestamp",
            "When this attempt was sent, `YYYY-MM-DDTHH:MM:SSZ` (UTC); signed.",
            {"type": "string", "format": "date-time"},
        ),
        _header(
            "X-Signature",
            "Lowercase hex HMAC-SHA256 under the store's webhook secret (`whsec_…`) of "
            "`X-Timestamp`, `POST`, the path the delivery was posted to and the SHA-256 of "
            "the raw body, joined by `\\n` (the request-signing scheme of your API calls). "
            "`workbench.webhooks.construct_event` checks it.",
            {"type": "string", "pattern": "^[0-9a-f]{64}$"},
        ),
        _header(
            "X-Event-Id",
            "The event's `id` (not signed: check it against the body).",
            {"type": "string", "pattern": f"^{IdPrefix.EVENT.value}"},
        ),
        _header("X-Event-Type", "The event's `type` (not signed).", {"const": name}),
        _header(
            "X-Event-Attempt",
            "1 for the first attempt, 2 for the first retry… (not signed).",
            {"type": "integer", "minimum": 1},
        ),
    ]


def _stem(entry: EventType) -> str:
    """``PaymentCaptured`` for `PaymentCapturedData`: the name both schemas start with."""
    return entry.data.__name__.removesuffix("Data")


def _data_schema(entry: EventType) -> dict[str, Any]:
    schema = entry.data.model_json_schema(
        by_alias=True, mode="serialization", ref_template=_REF + "{model}"
    )
    if "$defs" in schema:  # a definition's fields are plain values; a nested model needs care
        raise ValueError(f"{entry.data.__name__} nests a model: hoist its $defs first")
    return schema


def _envelope_schema(entry: EventType) -> dict[str, Any]:
    return {
        "title": f"{_stem(entry)}Event",
        "description": f"`{entry.name}`: sent when {entry.sent_when}.",
        "type": "object",
        "required": ["id", "type", "createdAt", "merchantId", "data"],
        "properties": {
            "id": {
                "type": "string",
                "pattern": f"^{IdPrefix.EVENT.value}",
                "description": "Unique; the same on every delivery attempt of the event.",
            },
            "type": {"const": entry.name},
            "createdAt": {
                "type": "string",
                "format": "date-time",
                "description": "When the event happened, UTC with `Z`.",
            },
            "merchantId": {"type": "string", "pattern": f"^{IdPrefix.MERCHANT.value}"},
            "data": {"$ref": f"{_REF}{entry.data.__name__}"},
        },
    }


def _example(entry: EventType) -> dict[str, Any]:
    return {
        "id": _EVENT_ID,
        "type": entry.name,
        "createdAt": _CREATED_AT,
        "merchantId": DEMO_MERCHANT_ID,
        "data": entry.example.wire(),
    }


def _webhook(entry: EventType, retries: str) -> dict[str, Any]:
    stem = _stem(entry)
    return {
        "post": {
            "operationId": stem[0].lower() + stem[1:] + "Webhook",
            "summary": f"{entry.name}: {entry.sent_when}",
            "description": f"POSTed to the session's `callbackUrl` or the store's webhook URL. "
            f"{retries}",
            "parameters": _headers(entry.name),
            "requestBody": {
                "required": True,
                "content": {
                    _JSON: {
                        "schema": {"$ref": f"{_REF}{stem}Event"},
                        "examples": {"sandbox": {"summary": entry.name, "value": _example(entry)}},
                    }
                },
            },
            "responses": {"2XX": {"description": "Received: the event is not sent again."}},
        }
    }


def add_webhooks(document: dict[str, Any]) -> None:
    """Add the ``webhooks`` section, and its schemas, to an OpenAPI 3.1 ``document``.

    Raises:
        ValueError: a schema name is taken already by one of the routes' schemas.
    """
    schemas: dict[str, Any] = document.setdefault("components", {}).setdefault("schemas", {})
    retries = _retries()
    webhooks: dict[str, Any] = {}
    for entry in EVENT_TYPES.values():
        for name, schema in (
            (entry.data.__name__, _data_schema(entry)),
            (f"{_stem(entry)}Event", _envelope_schema(entry)),
        ):
            if name in schemas:
                raise ValueError(f"the schema name {name} is taken by a route's schema")
            schemas[name] = schema
        webhooks[entry.name] = _webhook(entry, retries)
    document["webhooks"] = webhooks
