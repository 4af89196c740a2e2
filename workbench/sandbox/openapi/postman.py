"""A Postman collection (v2.1) of every endpoint, signing each request as the spec says.

For the engineers who test an integration in Postman or run it in CI with newman rather
than in Python. The collection is built from the same tables as the OpenAPI document:
each request is an operation of `workbench.spec.operations.OPERATIONS` (its name, area and
method and path come from there), its body is the operation's example from
`workbench.sandbox.openapi.examples` unless a step says otherwise, and which routes go
unsigned is the sandbox's own list (`workbench.sandbox.edge.signature.DEFAULT_PUBLIC_ROUTES`).

`STEPS` puts the operations in the order a run needs them: a request that needs an
identifier comes after the one that creates it, whose test script stores it in a
collection variable (``pm.collectionVariables.set``). Every operation has at least one
step; `postman_collection` refuses a table that leaves one out.

The collection-level pre-request script signs every request but the public ones: the
four-line canonical string (timestamp, method, route path without query string or
trailing slash, SHA-256 of the raw body bytes, that of the empty string for no body),
HMAC-SHA256 under ``secretKey``, UTF-8 throughout. It resolves the body's variables
itself and sends the text it hashed, so the bytes signed are the bytes sent. It gives
every POST a new UUID v4 ``Idempotency-Key`` and every request a UUID v4
``X-Request-Id`` (unless the request sets its own).

``baseUrl``, ``apiKey``, ``secretKey`` and ``adminToken`` are collection variables, read
with ``pm.variables`` so that an environment (``newman run --env-var secretKey=...``) wins
over them. ``baseUrl`` defaults to the local sandbox's address; the keys are empty, never
read from the environment (a collection is a file people share).

Whose data a run touches: with no keys given (or empty ones, as a shell's unset
``$WORKBENCH_API_KEY`` gives), the first request makes a scratch merchant
(``POST /sandbox/merchants``), every other request is signed with its keys, and the last
one deletes it, so a run leaves every other merchant's data and clock as they were.
With keys given, the run works in that merchant and never resets or deletes anything
of it: the scratch merchant's steps (`Step.scratch_only`) are skipped. ``adminToken``
is sent as ``Authorization: Bearer`` to ``/sandbox/merchants`` on a team host.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from workbench.sandbox.cards import CHALLENGE_CODE, TEST_CARDS
from workbench.sandbox.edge.signature import DEFAULT_PUBLIC_ROUTES
from workbench.sandbox.fixtures import CUSTOMERS, DEMO_MERCHANT_ID, DEMO_STORE_ID, customers_of
from workbench.sandbox.openapi.examples import REQUESTS
from workbench.spec.operations import OPERATIONS, TAGS, Operation

__all__ = [
    "SCHEMA",
    "STEPS",
    "UTF8_VECTOR_BODY",
    "Step",
    "postman_collection",
    "postman_json",
]

#: The format the collection is written in.
SCHEMA = "https://schema.getpostman.com/json/collection/v2.1.0/collection.json"

#: The body of the spec's ``utf8-body`` signing vector, byte for byte.
UTF8_VECTOR_BODY = (
    '{"transactionId":"ord-ş-1","amount":25050,"currency":"TRY",'
    '"description":"Çiçek siparişi – ığüşöç","returnUrl":"https://shop.example/return"}'
)

_CARD = {card.behaviour: card for card in TEST_CARDS}
_MEHMET = next(c for c in CUSTOMERS if c.cards and c.cards[0] == _CARD["renewal_fails"].token)
_DEMO_CUSTOMERS = sorted(c.id for c in customers_of(DEMO_MERCHANT_ID))
#: Where `_MEHMET` stands in a merchant's fixtures (sorted by id: every merchant's
#: customers are the demo merchant's, renamed alike).
_MEHMET_AT = _DEMO_CUSTOMERS.index(_MEHMET.id)
_AYSE_AT = 0


@dataclass(frozen=True, slots=True)
class Step:
    """One request of the collection: an operation, and what a run checks and keeps of it.

    Attributes:
        operation_id: the operation's ``operationId`` in `OPERATIONS`.
        name: the request's name in Postman.
        path: values of the path template's parameters (``{{variable}}`` references).
        query: the query string, without ``?``.
        body: the request body; ``None`` takes the operation's example (none if it has
            none), a string is sent as it stands.
        expect: the HTTP statuses the test script accepts.
        fields: response fields the test script checks, with their expected values.
        saves: collection variable -> response field it is set from.
        description: a line shown under the request's name.
        scratch_only: sent only when this run made a scratch merchant (no keys given),
            skipped otherwise: its creation, its reset, its deletion.
    """

    operation_id: str
    name: str
    path: dict[str, str] = field(default_factory=dict)
    query: str = ""
    body: dict[str, Any] | str | None = None
    expect: tuple[int, ...] = (200,)
    fields: dict[str, Any] = field(default_factory=dict)
    saves: dict[str, str] = field(default_factory=dict)
    description: str = ""
    scratch_only: bool = False


def _example(operation_id: str, **changes: Any) -> dict[str, Any]:
    return {**REQUESTS[operation_id][1], **changes}


_NEW_ORDER = "order-{{$guid}}"  # the transactionId fence: a new one on every send
_PAY = {"id": "{{paymentId}}"}
_SUB = {"id": "{{subscriptionId}}"}
_HASH = {"hash": "{{publicHash}}"}

#: Every request, in the order a run sends them, grouped by folder.
STEPS: tuple[tuple[str, tuple[Step, ...]], ...] = (
    (
        "Merchant",
        (
            Step(
                "createSandboxMerchant",
                "Make a scratch merchant (when no keys are given)",
                body={"name": "Postman run"},
                expect=(201,),
                saves={
                    "scratchMerchantId": "merchantId",
                    "scratchApiKey": "apiKey",
                    "scratchSecretKey": "secretKey",
                },
                description="Skipped when apiKey is given: the run then works in that "
                "merchant. Otherwise every later request is signed with this merchant's "
                "keys, and the last one deletes it.",
                scratch_only=True,
            ),
            Step(
                "getSandboxFixtures",
                "The merchant's store and customers",
                saves={
                    "storeId": "storeId",
                    "customerId": f"customers.{_AYSE_AT}.id",
                    "renewalCustomerId": f"customers.{_MEHMET_AT}.id",
                },
            ),
        ),
    ),
    (
        "Checkout sessions",
        (
            Step(
                "createCheckoutSession",
                "Create a checkout session",
                body=_example("createCheckoutSession", transactionId=_NEW_ORDER),
                expect=(201,),
                fields={"status": "active", "amount": 25000, "currency": "TRY"},
                saves={"sessionId": "sessionId"},
            ),
            Step(
                "createCheckoutSession",
                "Create a checkout session (the spec's UTF-8 signing vector)",
                body=UTF8_VECTOR_BODY,
                expect=(201, 200),
                description=(
                    "The body of the spec's `utf8-body` signing vector, byte for byte: "
                    "multi-byte characters are signed as the UTF-8 bytes sent. Its "
                    "transactionId is fixed: a merchant's first run creates the session "
                    "(201), a later one with the same keys finds it (200)."
                ),
            ),
        ),
    ),
    (
        "Payments",
        (
            Step(
                "chargeCard",
                "Charge a card",
                body=_example("chargeCard", transactionId=_NEW_ORDER),
                expect=(201,),
                fields={"status": "captured", "amount": 10000},
                saves={"paymentId": "paymentId"},
            ),
            Step(
                "chargeCard",
                "Preauthorize (capture false)",
                body=_example("chargeCard", transactionId=_NEW_ORDER, capture=False),
                expect=(201,),
                fields={"status": "authorized"},
                saves={"preauthId": "paymentId"},
            ),
            Step(
                "capturePayment",
                "Capture the preauthorization",
                path={"id": "{{preauthId}}"},
                fields={"status": "captured", "refundableAmount": 10000},
            ),
            Step(
                "chargeCard",
                "Preauthorize another (to void)",
                body=_example("chargeCard", transactionId=_NEW_ORDER, capture=False),
                expect=(201,),
                fields={"status": "authorized"},
                saves={"voidId": "paymentId"},
            ),
            Step(
                "voidPayment",
                "Void the authorization",
                path={"id": "{{voidId}}"},
                fields={"status": "voided"},
            ),
            Step(
                "refundPayment",
                "Refund part of the charge",
                path=_PAY,
                fields={"refundAmount": 2500, "refundableAmount": 7500},
            ),
            Step("getPayment", "Get the payment", path=_PAY, fields={"refundAmount": 2500}),
            Step(
                "getPaymentPublicStatus",
                "Public status (unsigned)",
                path=_PAY,
                fields={"status": "captured"},
            ),
            Step(
                "chargeCard",
                "Charge a card that asks for a 3-D Secure challenge",
                body=_example(
                    "chargeCard",
                    transactionId=_NEW_ORDER,
                    cardToken=_CARD["3ds_challenge"].token,
                ),
                expect=(201,),
                fields={"status": "pending_3ds"},
                saves={"challengedId": "paymentId", "correlationId": "correlationId"},
            ),
            Step(
                "getSandboxChallengePage",
                "The challenge page (sandbox ACS, HTML)",
                path={"payment_id": "{{challengedId}}"},
                query="correlationId={{correlationId}}",
            ),
            Step(
                "answerSandboxChallenge",
                "Answer the challenge (sandbox ACS)",
                path={"payment_id": "{{challengedId}}"},
                body={"correlationId": "{{correlationId}}", "code": CHALLENGE_CODE},
                fields={"result": "Y"},
                saves={"pares": "pares"},
            ),
            Step(
                "completeThreeDSChallenge",
                "Complete 3-D Secure",
                path={"id": "{{challengedId}}"},
                body={"pares": "{{pares}}", "correlationId": "{{correlationId}}"},
                fields={"status": "captured"},
            ),
        ),
    ),
    (
        "Cards",
        (
            Step(
                "createCardToken",
                "Tokenize a test card",
                expect=(201,),
                fields={"last4": "4242"},
                saves={"cardToken": "token"},
            ),
        ),
    ),
    (
        "Subscriptions",
        (
            Step(
                "createSubscription",
                "Create a subscription",
                body=_example(
                    "createSubscription",
                    storeId="{{storeId}}",
                    customerId="{{customerId}}",
                    cardToken="{{cardToken}}",
                ),
                expect=(201,),
                fields={"status": "active", "cycleNumber": 0},
                saves={"subscriptionId": "id", "publicHash": "publicHash"},
            ),
            Step(
                "listSubscriptions",
                "List subscriptions",
                query="storeId={{storeId}}&limit=10",
            ),
            Step("getSubscription", "Get the subscription", path=_SUB, fields={"status": "active"}),
            Step("pauseSubscription", "Pause", path=_SUB, fields={"status": "paused"}),
            Step("resumeSubscription", "Resume", path=_SUB, fields={"status": "active"}),
            Step(
                "createSubscription",
                "Create a daily subscription whose renewal fails",
                body=_example(
                    "createSubscription",
                    storeId="{{storeId}}",
                    customerId="{{renewalCustomerId}}",
                    amountMinor=500,
                    intervalUnit="day",
                ),
                expect=(201,),
                saves={"pastDueId": "id"},
                description=f"{_MEHMET.name}'s default card declines renewals.",
            ),
            Step(
                "advanceSandboxClock",
                "Advance the sandbox clock a day and an hour (the renewal fails)",
                body={"seconds": 25 * 3600},
            ),
            Step(
                "retrySubscription",
                "Retry the past-due subscription",
                path={"id": "{{pastDueId}}"},
                fields={"status": "past_due"},
            ),
            Step(
                "chargeSubscriptionNow",
                "Charge now",
                path=_SUB,
                expect=(202,),
                fields={"status": "queuing"},
            ),
            Step(
                "runSandboxReconciler",
                "Run one reconciler pass (it makes the queued charge)",
                description="Until then the subscription is charging; the sandbox's "
                "background reconciler would make the charge within seconds.",
            ),
            Step(
                "getSubscription", "Get it again: charged", path=_SUB, fields={"status": "active"}
            ),
            Step(
                "listSubscriptionCharges",
                "List its charges",
                path=_SUB,
                fields={"items.0.status": "captured"},
            ),
            Step(
                "cancelSubscription",
                "Cancel the past-due subscription now",
                path={"id": "{{pastDueId}}"},
                fields={"status": "cancelled"},
            ),
        ),
    ),
    (
        "Buyer portal",
        (
            Step("getPortalSubscription", "What the buyer sees (unsigned)", path=_HASH),
            Step(
                "createPortalCardUpdateSession",
                "Start a card update (unsigned)",
                path=_HASH,
                expect=(201,),
            ),
            Step(
                "cancelPortalSubscription",
                "Cancel at the period's end (unsigned)",
                path=_HASH,
                fields={"cancelAtPeriodEnd": True},
            ),
        ),
    ),
    (
        "Sandbox controls",
        (
            Step("getSandboxFixtures", "Fixtures: store, customers, test cards"),
            Step("listSandboxMerchants", "Merchants of this sandbox (no secrets)"),
            Step("settleSandboxRefunds", "Settle in-flight refunds"),
            Step("listSandboxEvents", "Events", saves={"eventId": "items.0.id"}),
            Step(
                "listSandboxEventDeliveries",
                "Deliveries of the first event",
                path={"event_id": "{{eventId}}"},
            ),
            Step("setSandboxLatency", "No added latency"),
            Step("setSandboxRateLimit", "The default rate limit"),
            Step(
                "setSandboxAuthorizationLifetime",
                "Authorizations expire after the default 7 days",
            ),
            Step(
                "setSandboxWebhook", "Deliver events to webhookUrl", body={"url": "{{webhookUrl}}"}
            ),
            Step("failNextSandboxRequest", "Make the next request fail with 500"),
            Step(
                "getPayment",
                "A request that fails as asked",
                path=_PAY,
                expect=(500,),
                description="Answered 500 once, because of the request before.",
            ),
            Step(
                "resetSandboxMerchant",
                "Reset the scratch merchant",
                description="Deletes every object of the merchant and restores its "
                "fixtures. Skipped when keys are given: a run never resets your merchant.",
                scratch_only=True,
            ),
            Step(
                "deleteSandboxMerchant",
                "Delete the scratch merchant",
                path={"merchant_id": "{{scratchMerchantId}}"},
                description="Signed with its own keys; its keys stop working. Skipped "
                "when keys are given.",
                scratch_only=True,
            ),
        ),
    ),
)

_OPERATIONS = {op.operation_id: op for op in OPERATIONS}


def _unsigned(op: Operation) -> bool:
    """Whether the sandbox serves ``op`` without a signature (its public routes)."""
    sample = re.sub(r"\{[^}]+\}", "x", op.path)
    return any(
        method in ("*", op.method) and re.search(pattern, sample)
        for method, pattern in DEFAULT_PUBLIC_ROUTES
    )


def _public_routes_js() -> str:
    pairs = [
        f"[{json.dumps(method)}, new RegExp({json.dumps(pattern)})]"
        for method, pattern in DEFAULT_PUBLIC_ROUTES
    ]
    return "[\n  " + ",\n  ".join(pairs) + ",\n]"


_SIGNING_SCRIPT = """\
// Signs every request as the service's spec says (generated by `workbench postman`).
// X-Signature = hex(HMAC-SHA256(secretKey, timestamp LF METHOD LF path LF hex(SHA-256(body))))
const CryptoJS = require("crypto-js");
const uuid = require("uuid");
const sdk = require("postman-collection");

// Routes served without a signature: (method or "*", path pattern), as the sandbox has them.
const UNSIGNED = __UNSIGNED__;

const method = pm.request.method.toUpperCase();
const url = new sdk.Url(pm.variables.replaceIn(pm.request.url.toString()));
// Line 3: the route path only: no domain, no query string, no trailing slash.
let path = url.getPath() || "/";
if (path.length > 1) path = path.replace(/\\/+$/, "") || "/";

// The body's variables are resolved here and the resolved text is what is sent, so the
// bytes hashed are the bytes sent ({{$guid}} would otherwise differ between the two).
let body = "";
if (pm.request.body && pm.request.body.mode === "raw" && pm.request.body.raw) {
  body = pm.variables.replaceIn(pm.request.body.raw);
  pm.request.body.update({ mode: "raw", raw: body });
}

// UUID v4, the format the spec gives both headers.
if (method === "POST" && !pm.request.headers.has("Idempotency-Key")) {
  pm.request.headers.upsert({ key: "Idempotency-Key", value: uuid.v4() });
}
if (!pm.request.headers.has("X-Request-Id")) {
  pm.request.headers.upsert({ key: "X-Request-Id", value: uuid.v4() });
}

// The admin token of a team host, for making, listing and deleting merchants.
const adminToken = pm.variables.get("adminToken");
if (adminToken && /^\\/sandbox\\/(merchants|reset)(\\/|$)/.test(path)) {
  pm.request.headers.upsert({ key: "Authorization", value: "Bearer " + adminToken });
}

const unsigned = UNSIGNED.some(([m, rx]) => (m === "*" || m === method) && rx.test(path));
if (unsigned) {
  ["X-Api-Key", "X-Timestamp", "X-Signature"].forEach((h) => pm.request.headers.remove(h));
} else {
  // The keys given, else the scratch merchant's this run made (empty values: none given).
  const given = Boolean(pm.variables.get("apiKey"));
  const apiKey = given ? pm.variables.get("apiKey") : pm.collectionVariables.get("scratchApiKey");
  const secretKey = given
    ? pm.variables.get("secretKey")
    : pm.collectionVariables.get("scratchSecretKey");
  if (!apiKey || !secretKey) {
    throw new Error(
      "Set the apiKey and secretKey variables, or leave apiKey empty against a sandbox " +
        "(the first request then makes a scratch merchant).",
    );
  }
  // ISO 8601 UTC to the second, ending in Z: no milliseconds, no offset.
  const timestamp = new Date().toISOString().replace(/\\.\\d{3}Z$/, "Z");
  // Line 4: SHA-256 of the raw body's UTF-8 bytes; of the empty string when there is none.
  const bodySha256 = CryptoJS.SHA256(CryptoJS.enc.Utf8.parse(body)).toString(CryptoJS.enc.Hex);
  // Four lines joined by LF, no trailing newline, signed as UTF-8.
  const canonical = [timestamp, method, path, bodySha256].join("\\n");
  const signature = CryptoJS.HmacSHA256(
    CryptoJS.enc.Utf8.parse(canonical),
    CryptoJS.enc.Utf8.parse(secretKey),
  ).toString(CryptoJS.enc.Hex);
  pm.request.headers.upsert({ key: "X-Api-Key", value: apiKey });
  pm.request.headers.upsert({ key: "X-Timestamp", value: timestamp });
  pm.request.headers.upsert({ key: "X-Signature", value: signature });
}
"""

_COLLECTION_TESTS = """\
// A signed request's signature and timestamp were accepted (whatever else was answered).
if (pm.request.headers.has("X-Signature")) {
  pm.test("the signature is accepted", () => {
    const code = pm.response.code >= 400 ? pm.response.json().code : undefined;
    pm.expect(code).to.not.be.oneOf(["SVC-GW-1001", "SVC-GW-1002"]);
  });
}
// Every error answer is the spec's envelope: code, message, requestId.
if (pm.response.code >= 400) {
  pm.test("an error answer is the envelope", () => {
    const envelope = pm.response.json();
    pm.expect(envelope).to.have.all.keys("code", "message", "requestId");
  });
}
"""


def _field_js(name: str) -> str:
    """A JavaScript reference to the response field ``name`` (``items.0.id``) of ``json``."""
    return "json" + "".join(
        f"[{part}]" if part.isdigit() else f"[{json.dumps(part)}]" for part in name.split(".")
    )


def _tests(step: Step) -> list[str]:
    statuses = " or ".join(map(str, step.expect))
    lines = [
        f"pm.test({json.dumps(f'answers {statuses}')}, () => {{",
        f"  pm.expect(pm.response.code).to.be.oneOf({json.dumps(list(step.expect))});",
        "});",
    ]
    if step.fields or step.saves:
        lines.append("const json = pm.response.json();")
    for name, value in step.fields.items():
        lines += [
            f"pm.test({json.dumps(f'{name} is {json.dumps(value)}')}, () => {{",
            f"  pm.expect({_field_js(name)}).to.eql({json.dumps(value)});",
            "});",
        ]
    for variable, source in step.saves.items():
        lines.append(f"pm.collectionVariables.set({json.dumps(variable)}, {_field_js(source)});")
    return lines


def _url(op: Operation, step: Step) -> dict[str, Any]:
    path = op.path
    for name, value in step.path.items():
        path = path.replace(f"{{{name}}}", value)
    if "{" in path.replace("{{", "").replace("}}", ""):
        raise ValueError(f"{step.name!r}: a path parameter of {op.path} has no value")
    raw = "{{baseUrl}}" + path + (f"?{step.query}" if step.query else "")
    url: dict[str, Any] = {
        "raw": raw,
        "host": ["{{baseUrl}}"],
        "path": [part for part in path.split("/") if part],
    }
    if step.query:
        url["query"] = [
            dict(zip(("key", "value"), pair.split("=", 1), strict=True))
            for pair in step.query.split("&")
        ]
    return url


def _body(step: Step) -> str | None:
    if isinstance(step.body, str):
        return step.body
    value = step.body if step.body is not None else REQUESTS.get(step.operation_id, ("", None))[1]
    return None if value is None else json.dumps(value, ensure_ascii=False, indent=2)


#: A scratch-only step's own pre-request script: it runs after the collection's.
_SCRATCH_ONLY = [
    "// Only for a scratch merchant: with keys given, nothing of that merchant is reset or",
    "// deleted, and no merchant is made.",
    'if (pm.variables.get("apiKey")) {',
    "  pm.execution.skipRequest();",
    "}",
]
_FORGET_SCRATCH = [
    "if (pm.response.code === 200) {",
    '  ["scratchMerchantId", "scratchApiKey", "scratchSecretKey"].forEach((name) =>',
    "    pm.collectionVariables.unset(name),",
    "  );",
    "}",
]


def _event(listen: str, lines: list[str]) -> dict[str, Any]:
    """A script, in a block of its own: Postman runs every script of a run in one scope,
    where a second ``const`` of the same name is a SyntaxError."""
    return {
        "listen": listen,
        "script": {"type": "text/javascript", "exec": ["{", *lines, "}"]},
    }


def _item(step: Step) -> dict[str, Any]:
    try:
        op = _OPERATIONS[step.operation_id]
    except KeyError:
        raise LookupError(f"{step.name!r}: no operation {step.operation_id!r}") from None
    request: dict[str, Any] = {
        "method": op.method,
        "header": [],
        "url": _url(op, step),
        "description": "\n\n".join(
            part
            for part in (
                f"`{op.method} {op.path}` ({op.operation_id}, {op.tag})",
                "Unsigned: the identifier in the path is the bearer." if _unsigned(op) else "",
                step.description,
            )
            if part
        ),
    }
    body = _body(step)
    if body is not None:
        request["header"].append({"key": "Content-Type", "value": "application/json"})
        request["body"] = {"mode": "raw", "raw": body, "options": {"raw": {"language": "json"}}}
    tests = _tests(step)
    if step.operation_id == "deleteSandboxMerchant":
        tests += _FORGET_SCRATCH
    events = [_event("test", tests)]
    if step.scratch_only:
        events.insert(0, _event("prerequest", _SCRATCH_ONLY))
    return {"name": step.name, "request": request, "event": events}


def postman_collection(base_url: str = "http://127.0.0.1:8765") -> dict[str, Any]:
    """The collection as a Postman v2.1 document.

    Args:
        base_url: the default of the ``baseUrl`` variable.

    Raises:
        LookupError: a step names no operation, or an operation has no step.
    """
    covered = {step.operation_id for _, steps in STEPS for step in steps}
    missing = [op.operation_id for op in OPERATIONS if op.operation_id not in covered]
    if missing:
        raise LookupError(f"no step of workbench.sandbox.openapi.postman.STEPS sends {missing}")
    folders = [
        {
            "name": name,
            "description": TAGS.get(name, ""),
            "item": [_item(step) for step in steps],
        }
        for name, steps in STEPS
    ]
    signing = _SIGNING_SCRIPT.replace("__UNSIGNED__", _public_routes_js())

    variables = {
        "baseUrl": base_url,
        "apiKey": "",
        "secretKey": "",
        "adminToken": "",
        "webhookUrl": "https://shop.example/webhooks",
        # The demo merchant's, until the fixtures request sets the merchant's own.
        "storeId": DEMO_STORE_ID,
        "customerId": _DEMO_CUSTOMERS[_AYSE_AT],
        "renewalCustomerId": _MEHMET.id,
    }
    return {
        "info": {
            "name": "Payments Workbench",
            "description": (
                "Every endpoint of the payments service and the local sandbox, signed by "
                "the collection's pre-request script. baseUrl defaults to the local "
                "sandbox. With apiKey and secretKey empty, the first request makes a "
                "scratch merchant, the run works in it and the last request deletes it; "
                "with keys given (in an environment, as secrets), the run works in that "
                "merchant and never resets or deletes anything. adminToken: a team "
                "sandbox's admin token. Generated by `workbench postman`."
            ),
            "schema": SCHEMA,
        },
        "item": folders,
        "event": [
            _event("prerequest", signing.splitlines()),
            _event("test", _COLLECTION_TESTS.splitlines()),
        ],
        "variable": [
            {
                "key": key,
                "value": value,
                "type": "secret" if key in ("secretKey", "adminToken") else "string",
            }
            for key, value in variables.items()
        ],
    }


def postman_json(base_url: str = "http://127.0.0.1:8765") -> str:
    """The collection as ``workbench postman`` writes it (JSON, UTF-8, indented)."""
    return json.dumps(postman_collection(base_url), indent=2, ensure_ascii=False) + "\n"
