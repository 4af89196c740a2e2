"""The JSON shapes of a subscription: full object, list item, charge item, public view."""

from __future__ import annotations

from typing import Any

from workbench.sandbox.clock import iso
from workbench.sandbox.storage import AnyRow

__all__ = ["charge_item", "event_fields", "full", "list_item", "public_view"]


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
