"""What the sandbox does agrees with what it says.

* TR QR payments report ``cardBrand``/``cardType``/``cardMask`` values from the list
  the decisions page gives (``workbench.sandbox.cards.CARD_BRANDS`` / ``CARD_TYPES``).
* Customers and installments endpoints are declared out of scope: no route answers.
* ``amountMinor >= 100`` on subscriptions is enforced and documented.
* A body sent as ``text/plain`` is told about its Content-Type, not "must be a JSON object".

Over real HTTP on SQLite and PostgreSQL; the documentation checks read
docs/sandbox/decisions.md.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import httpx2
import pytest

from tests.sandbox.bodies import charge_body, txn
from tests.sandbox.envelope import assert_envelope
from workbench.sandbox.cards import CARD_BRANDS, CARD_TYPES

DECISIONS = Path(__file__).resolve().parents[2] / "docs" / "sandbox" / "decisions.md"


def _decision_row(starts: str) -> str:
    rows = [line for line in DECISIONS.read_text().splitlines() if line.startswith(starts)]
    assert len(rows) == 1, (starts, rows)
    return rows[0]


def _listed(row: str, field: str) -> set[str]:
    """The backticked values the row lists after "`field` is one of" / "`field` one of"."""
    match = re.search(rf"`{field}` (?:is )?one of ((?:`[a-z_]+`(?:, )?)+)", row)
    assert match, (field, row)
    return set(re.findall(r"`([a-z_]+)`", match.group(1)))


def test_qr_payment_card_fields_are_the_listed_values(
    client: httpx2.Client, anon: httpx2.Client
) -> None:
    body = {
        "transactionId": txn(),
        "amount": 12_345,
        "currency": "TRY",
        "returnUrl": "https://merchant.example/return",
        "mode": "qr",
    }
    session = client.post("/v1/payments/sessions", json=body)
    assert session.status_code == 201, session.text
    paid = anon.post(f"{session.json()['checkoutUrl']}/qr")
    assert paid.status_code == 303, paid.text
    query = parse_qs(urlsplit(paid.headers["location"]).query)
    payment = client.get(f"/v1/payments/{query['paymentId'][0]}").json()
    assert payment["status"] == "captured"

    row = _decision_row('| "Allowed values of cardBrand and cardType: not shown"')
    assert _listed(row, "cardBrand") == set(CARD_BRANDS)
    assert _listed(row, "cardType") == set(CARD_TYPES)
    assert payment["cardBrand"] in CARD_BRANDS
    assert payment["cardType"] in CARD_TYPES
    assert payment["cardMask"] == ""
    assert payment["bin"] == ""
    assert '`cardMask` `""`' in row
    # A card payment and a token report values from the same lists.
    card = client.post("/v1/payments/card", json=charge_body()).json()
    assert card["cardBrand"] in CARD_BRANDS
    assert card["cardType"] in CARD_TYPES
    assert card["cardBrand"] != "tr_qr"


@pytest.mark.parametrize("method", ["GET", "POST"])
@pytest.mark.parametrize(
    "path", ["/v1/customers", "/v1/customers/cus_demo_ayse", "/v1/installments"]
)
def test_customers_and_installments_are_out_of_scope(
    client: httpx2.Client, method: str, path: str
) -> None:
    response = client.request(method, path, content=b"{}" if method == "POST" else None)
    assert_envelope(response, 404, "SVC-GW-4004")
    section = DECISIONS.read_text().split("## Out of scope", 1)
    assert len(section) == 2, "decisions.md has no 'Out of scope' section"
    assert "**customers and installments endpoints are out of scope**" in section[1]


def test_subscription_amount_minor_at_least_100(client: httpx2.Client) -> None:
    body = {
        "storeId": "sto_demo0001",
        "customerId": "cus_demo_ayse",
        "amountMinor": 99,
        "currency": "TRY",
        "intervalCount": 1,
        "intervalUnit": "month",
    }
    refused = assert_envelope(client.post("/v1/subscriptions", json=body), 400, "SVC-VAL-4001")
    assert refused["message"].startswith("amountMinor")
    assert client.post("/v1/subscriptions", json={**body, "amountMinor": 100}).status_code == 201
    row = _decision_row("| `amountMinor`")
    assert "at least **100**" in row


@pytest.mark.parametrize("content_type", ["text/plain", "text/plain; charset=utf-8", "text/csv"])
@pytest.mark.parametrize(
    "path", ["/v1/payments/card", "/v1/payments/sessions", "/sandbox/clock/advance"]
)
def test_a_text_plain_body_is_told_about_its_content_type(
    client: httpx2.Client, content_type: str, path: str
) -> None:
    raw = json.dumps(charge_body()).encode()
    response = client.post(path, content=raw, headers={"Content-Type": content_type})
    body = assert_envelope(response, 400, "SVC-GW-4000")
    assert "Content-Type" in body["message"], body
    assert content_type.split(";")[0] in body["message"]
    assert "must be a JSON object" not in body["message"]


def test_a_json_body_that_is_not_an_object_still_says_so(client: httpx2.Client) -> None:
    response = client.post("/v1/payments/card", json=[1, 2])
    body = assert_envelope(response, 400, "SVC-GW-4000")
    assert body["message"] == "request body must be a JSON object"
