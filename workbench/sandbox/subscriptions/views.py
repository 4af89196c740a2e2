"""The JSON shapes of a subscription: full object, list item, charge item, public view.

A list page is written straight to JSON bytes by `list_page_json` from the few columns
`LIST_COLUMNS` names, without building a row object per item: a page of a list is
most of what listing costs. It writes what ``dumps`` of `list_item` for each row gives
(checked byte for byte by tests/sandbox/subscriptions/test_list_bytes.py).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import pydantic_core
import sqlalchemy as sa

from workbench.sandbox.clock import iso
from workbench.sandbox.storage import AnyRow
from workbench.sandbox.subscriptions.tables import subscriptions as _S

__all__ = [
    "LIST_COLUMNS",
    "charge_item",
    "event_fields",
    "full",
    "list_item",
    "list_page_json",
    "public_view",
]

#: What a list page reads, in the order `list_page_json` unpacks: ``seq`` (the cursor's
#: position), then the list item's fields.
LIST_COLUMNS: tuple[sa.Column[Any], ...] = (
    _S.c.seq,
    _S.c.id,
    _S.c.store_id,
    _S.c.status,
    _S.c.amount_minor,
    _S.c.currency,
    _S.c.interval_count,
    _S.c.interval_unit,
    _S.c.next_charge_at,
    _S.c.created_at,
)


def full(row: AnyRow, public_hash: str | None = None) -> dict[str, Any]:
    """The subscription object; ``publicHash`` only when given (the creation response)."""
    body: dict[str, Any] = {
        "id": row.id,
        "merchantId": row.merchant_id,
        "storeId": row.store_id,
        "customerId": row.customer_id,
    }
    if public_hash is not None:
        body["publicHash"] = public_hash
    body.update(
        {
            "status": row.status,
            "amountMinor": row.amount_minor,
            "currency": row.currency,
            "intervalCount": row.interval_count,
            "intervalUnit": row.interval_unit,
            "cycleNumber": row.cycle_number,
            "nextChargeAt": iso(row.next_charge_at),
            "cardLast4": row.card_last4,
            "cardBrand": row.card_brand,
            "createdAt": iso(row.created_at),
            "cancelAtPeriodEnd": row.cancel_at_period_end,
            "trialEndAt": iso(row.trial_end_at),
        }
    )
    return body


def list_item(row: AnyRow) -> dict[str, Any]:
    """The spec's list subset."""
    return {
        "id": row.id,
        "storeId": row.store_id,
        "status": row.status,
        "amountMinor": row.amount_minor,
        "currency": row.currency,
        "intervalCount": row.interval_count,
        "intervalUnit": row.interval_unit,
        "nextChargeAt": iso(row.next_charge_at),
        "createdAt": iso(row.created_at),
    }


def list_page_json(rows: Iterable[Sequence[Any]], next_cursor: str | None) -> bytes:
    """A list page's body from rows of `LIST_COLUMNS`: ``{"items": [...], "nextCursor"}``
    with each item as `list_item` makes it, keys in the same order."""
    items = [
        {
            "id": id_,
            "storeId": store_id,
            "status": status,
            "amountMinor": amount,
            "currency": currency,
            "intervalCount": count,
            "intervalUnit": unit,
            "nextChargeAt": iso(next_at),
            "createdAt": iso(created_at),
        }
        for _seq, id_, store_id, status, amount, currency, count, unit, next_at, created_at in rows
    ]
    return pydantic_core.to_json({"items": items, "nextCursor": next_cursor})


def charge_item(row: AnyRow) -> dict[str, Any]:
    """One charge attempt: the payment's status (``captured`` or ``declined``)."""
    return {
        "cycleNumber": row.cycle_number,
        "paymentId": row.payment_id,
        "status": row.payment_status,
        "amountMinor": row.amount_minor,
        "chargedAt": iso(row.charged_at),
    }


def public_view(row: AnyRow, public_hash: str, merchant_name: str) -> dict[str, Any]:
    """Exactly the spec's public fields: no ids, no customer, no full card.

    ``nextChargeAt`` is null when no charge will happen: a subscription set to cancel at
    period end shows the buyer no charge date.
    """
    next_charge = None if row.cancel_at_period_end else row.next_charge_at
    return {
        "publicHash": public_hash,
        "merchantName": merchant_name,
        "status": row.status,
        "amountMinor": row.amount_minor,
        "currency": row.currency,
        "intervalCount": row.interval_count,
        "intervalUnit": row.interval_unit,
        "cardLast4": row.card_last4,
        "cardBrand": row.card_brand,
        "nextChargeAt": iso(next_charge),
    }


def event_fields(row: AnyRow | dict[str, Any]) -> dict[str, Any]:
    """The fields every subscription event's ``data`` carries, by their Python names
    (`workbench.spec.events.SubscriptionEventData`)."""
    r = row if isinstance(row, dict) else row._asdict()
    return {
        "subscription_id": r["id"],
        "customer_id": r["customer_id"],
        "status": r["status"],
        "cycle_number": r["cycle_number"],
        "amount_minor": r["amount_minor"],
        "currency": r["currency"],
        "next_charge_at": r["next_charge_at"],
        "cancel_at_period_end": r["cancel_at_period_end"],
    }
