"""The fast list pages write the same bytes as the item builders and the models.

``GET /v1/subscriptions`` and ``GET /sandbox/events`` write their bodies straight to
JSON bytes (`views.list_page_json`, `events.list_events_json`). Each is checked here,
on SQLite and PostgreSQL, against ``dumps`` of the items the plain builders make
(`views.list_item`, `events.list_events`) and against the response models'
serialisation, for rows that reach every branch: null optional fields, times with
microseconds (written as whole seconds with ``Z``), amounts far past 2**31 kuruş,
non-ASCII text, quotes and backslashes, every delivery state, an attempt in flight.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import sqlalchemy as sa

from workbench.sandbox import DEMO_MERCHANT_ID, DEMO_STORE_ID, SandboxServer, events, tables
from workbench.sandbox.clock import wall_now
from workbench.sandbox.replies import dumps
from workbench.sandbox.subscriptions import service, subscriptions, views
from workbench.sandbox.subscriptions.cursor import ensure_secret
from workbench.sandbox.subscriptions.models import SubscriptionList
from workbench.spec.events import PaymentCapturedData, PaymentVoidedData, SessionExpiredData

WHEN = datetime(2026, 11, 29, 10, 11, 12, 345_678, tzinfo=UTC)
ODD_TEXT = 'sipariş "ğüşöç" \\ İstanbul\u2028€'


def _subscription(n: int, **values: Any) -> dict[str, Any]:
    row = {
        "id": f"sub_bytes{n:015d}",
        "merchant_id": DEMO_MERCHANT_ID,
        "store_id": DEMO_STORE_ID,
        "customer_id": "cus_demo_ayse",
        "public_hash_sha256": f"{n:064d}",
        "status": "active",
        "amount_minor": 9_990,
        "currency": "TRY",
        "interval_count": 1,
        "interval_unit": "month",
        "cycle_number": 0,
        "anchor_at": WHEN,
        "periods": 1,
        "next_charge_at": WHEN + timedelta(days=30),
        "attempts": 0,
        "card_token": "tok_test_success",
        "card_last4": "4242",
        "card_brand": "visa",
        "cancel_at_period_end": False,
        "generate_invoices": False,
        "created_at": WHEN + timedelta(seconds=n),
    }
    row.update(values)
    return row


def test_a_subscriptions_page_is_the_items_and_the_models_bytes(
    sandbox_with: Callable[..., SandboxServer],
) -> None:
    db = sandbox_with().sandbox.db
    rows = [
        _subscription(0),
        _subscription(1, status="canceled", next_charge_at=None, store_id=ODD_TEXT),
        _subscription(2, amount_minor=2**40 + 7, interval_unit="week", interval_count=12),
        _subscription(3, status="past_due", created_at=WHEN.replace(microsecond=999_999)),
        _subscription(4, status="paused", currency="TRY"),
    ]
    with db.write() as conn:
        conn.execute(sa.insert(subscriptions), rows)
    secret = ensure_secret(db)
    filters = service.ListFilters()
    pages: list[bytes] = []
    cursor = None
    with db.read() as conn:
        for _ in range(len(rows)):
            body = service.list_page(conn, DEMO_MERCHANT_ID, filters, 2, cursor, secret)
            pages.append(body)
            cursor = json.loads(body)["nextCursor"]
            if cursor is None:
                break
        full = conn.execute(
            sa.select(subscriptions)
            .where(subscriptions.c.merchant_id == DEMO_MERCHANT_ID)
            .order_by(subscriptions.c.seq)
        ).all()
    assert len(pages) == 3
    for number, body in enumerate(pages):
        page = json.loads(body)
        expected = dumps(
            {
                "items": [views.list_item(r) for r in full[number * 2 : number * 2 + 2]],
                "nextCursor": page["nextCursor"],
            }
        )
        assert body == expected
        assert body == SubscriptionList.model_validate_json(body).model_dump_json().encode()
    listed = [item for body in pages for item in json.loads(body)["items"]]
    assert listed[1]["nextChargeAt"] is None
    assert listed[1]["storeId"] == ODD_TEXT
    assert listed[2]["amountMinor"] == 2**40 + 7
    assert listed[3]["createdAt"] == "2026-11-29T10:11:12Z"


def test_the_events_list_is_the_items_bytes_in_every_delivery_state(
    sandbox_with: Callable[..., SandboxServer],
) -> None:
    db = sandbox_with().sandbox.db
    made = []
    with db.write() as conn:
        for n, (data, url) in enumerate(
            [
                (
                    PaymentCapturedData(
                        payment_id="pay_b1",
                        transaction_id=ODD_TEXT,
                        status="captured",
                        amount=2**40,
                        currency="TRY",
                    ),
                    None,
                ),
                (
                    PaymentVoidedData(
                        payment_id="pay_b2",
                        transaction_id="t2",
                        status="voided",
                        amount=100,
                        currency="TRY",
                        reason=None,
                    ),
                    'https://shop.example/hooks?a="b"',
                ),
                (
                    SessionExpiredData(session_id="9f0c-ses", transaction_id="t3"),
                    "https://shop.example/h",
                ),
                (
                    PaymentCapturedData(
                        payment_id="pay_b4",
                        transaction_id="t4",
                        status="captured",
                        amount=5,
                        currency="TRY",
                    ),
                    "https://shop.example/h",
                ),
                (
                    PaymentCapturedData(
                        payment_id="pay_b5",
                        transaction_id="t5",
                        status="captured",
                        amount=5,
                        currency="TRY",
                    ),
                    "https://shop.example/h",
                ),
            ]
        ):
            made.append(
                events.emit(
                    conn,
                    merchant_id=DEMO_MERCHANT_ID,
                    store_id=DEMO_STORE_ID,
                    data=data,
                    now=WHEN + timedelta(seconds=n),
                    target_url=url,
                    look_up_webhook=False,
                )
            )
        e = tables.events
        later = WHEN + timedelta(minutes=5, microseconds=1)
        conn.execute(  # delivered after a retry
            sa.update(e)
            .where(e.c.id == made[1])
            .values(
                delivery_state="delivered", attempts=2, delivered_at=later, next_attempt_at=None
            )
        )
        conn.execute(  # given up, with an error that needs escaping
            sa.update(e)
            .where(e.c.id == made[2])
            .values(
                delivery_state="failed",
                attempts=5,
                next_attempt_at=None,
                last_error=f"HTTP 500 {ODD_TEXT}",
            )
        )
        conn.execute(  # an attempt in flight: its number is not counted yet
            sa.update(e)
            .where(e.c.id == made[3])
            .values(
                attempts=3,
                claimed_until=wall_now() + timedelta(hours=1),
                next_attempt_at=later,
                last_error="no answer within 5 s",
            )
        )
    with db.read() as conn:
        body = events.list_events_json(conn, DEMO_MERCHANT_ID)
        reference = events.list_events(conn, DEMO_MERCHANT_ID)
        voided = events.list_events_json(conn, DEMO_MERCHANT_ID, "payment.voided")
        nothing = events.list_events_json(conn, DEMO_MERCHANT_ID, "no.such")
    mine = [item for item in reference if item["id"] in made]
    assert [item["id"] for item in mine] == made
    assert body == dumps({"items": reference})
    assert voided == dumps({"items": [i for i in reference if i["type"] == "payment.voided"]})
    assert nothing == b'{"items":[]}'
    states = {item["id"]: item["delivery"] for item in json.loads(body)["items"]}
    assert states[made[0]]["state"] == "no_endpoint"
    assert states[made[0]]["url"] is None
    assert states[made[1]]["deliveredAt"] == "2026-11-29T10:16:12Z"
    assert states[made[2]]["lastError"] == f"HTTP 500 {ODD_TEXT}"
    assert states[made[3]]["attempts"] == 2
    assert states[made[3]]["nextAttemptAt"] == "2026-11-29T10:16:12Z"
    assert states[made[4]]["nextAttemptAt"] == "2026-11-29T10:11:16Z"
