"""Hosted checkout helpers: the page shown inline, the TR QR fields as a table, the demo
``returnUrl``, and the flow behind the notebook's "Try it" form."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

import pandas as pd

from workbench.config import ENV_INTERACTIVE
from workbench.emvco import parse_tlv, verify_crc
from workbench.flows._run import APPROVED_CARD, FlowRun, new_transaction_id
from workbench.flows.buyer import (
    DEMO_RETURN_PATH,
    card_number_for,
    open_page,
    pay_by_card,
    pay_by_qr,
    qr_payload,
)
from workbench.money import format_try
from workbench.webhooks import WebhookListener

if TYPE_CHECKING:
    from workbench._client import Client

__all__ = ["PageAddress", "checkout", "qr_fields", "return_url", "show_page"]


def show_page(url: str, *, height: int = 560) -> Any:
    """The hosted page inline (an IFrame) when a person is looking, else its address as text.

    Headless runs (tests, ``make run``, the guide) store no IFrame: a stored page
    would point at a sandbox port that no longer exists.
    """
    if os.environ.get(ENV_INTERACTIVE):
        from IPython.display import IFrame

        return IFrame(url, width="100%", height=height)
    return PageAddress(url)


@dataclass(frozen=True, slots=True)
class PageAddress:
    """A hosted page's address, shown as one line of text (``hosted page: http://…``)."""

    url: str

    def __repr__(self) -> str:
        return f"hosted page: {self.url}"


#: What each tag of the TR QR payload holds (EMVCo merchant-presented mode).
QR_TAGS: dict[str, str] = {
    "00": "payload format indicator",
    "01": "point of initiation (12: dynamic, one payment)",
    "26": "merchant account information",
    "26.00": "globally unique identifier",
    "26.01": "merchant id",
    "26.02": "checkout session id",
    "52": "merchant category code",
    "53": "currency (ISO 4217 numeric; 949 is TRY)",
    "54": "amount (lira)",
    "58": "country",
    "59": "merchant name",
    "60": "merchant city",
    "62": "additional data",
    "62.05": "reference label (transactionId)",
    "63": "CRC-16/CCITT-FALSE",
}


def qr_fields(payload: str) -> pd.DataFrame:
    """The TR QR payload's fields as a table (tag, meaning, value); nested tags as ``26.02``.

    The CRC row shows whether the checksum matches rather than its four hex digits.
    """
    rows = []
    for tag, value in parse_tlv(payload).items():
        if tag in ("26", "62"):
            for sub, inner in parse_tlv(value).items():
                name = f"{tag}.{sub}"
                rows.append({"tag": name, "meaning": QR_TAGS.get(name, ""), "value": inner})
            continue
        shown = f"matches: {verify_crc(payload)}" if tag == "63" else value
        rows.append({"tag": tag, "meaning": QR_TAGS.get(tag, ""), "value": shown})
    return pd.DataFrame(rows, columns=["tag", "meaning", "value"])


def return_url(client: Client) -> str:
    """The sandbox's demo merchant return page, used as ``returnUrl`` (a real one is yours)."""
    return client.base_url + DEMO_RETURN_PATH


def checkout(
    client: Client,
    *,
    amount: int = 34_900,
    mode: Literal["payment", "qr"] = "payment",
    card_token: str = APPROVED_CARD,
    installments: int = 1,
) -> FlowRun:
    """Create a checkout session, pay it as the buyer, read the payment, wait for the webhooks.

    What runs behind the notebook's "Try it" form; the notebook's cells make the
    same calls one by one.

    Args:
        client: a configured client of the local sandbox (the buyer's steps post to its pages).
        amount: kuruş.
        mode: ``payment`` (card form) or ``qr`` (TR QR code paid by a bank app).
        card_token: the test card whose number the buyer types (``payment`` mode).
        installments: what the buyer picks on the page.

    Returns:
        The run; ``outcome`` holds ``session_status``, ``page_status``, ``redirect``
        (``outcome`` and ``errorCode`` of the query added to ``returnUrl``), ``status``
        (the payment's status), ``session_event`` (the ``session.completed`` event's
        ``paymentId`` equals the payment's), ``events`` (the types of the verified events
        of this checkout, in order), ``qr_payload`` (``qr`` mode) and ``again_status``
        (the page once the session is completed).
    """
    if mode not in ("payment", "qr"):
        raise ValueError("mode must be 'payment' or 'qr'")
    params = {"amount": amount, "mode": mode, "card_token": card_token,
              "installments": installments}  # fmt: skip
    run = FlowRun("checkout", params)
    with run.recording(client):
        fixtures = client.sandbox.fixtures()
        number = card_number_for(fixtures, card_token) if mode == "payment" else ""
        with WebhookListener(fixtures.webhook_secret or "") as listener:
            session = client.sessions.create(
                transaction_id=new_transaction_id(), amount=amount, mode=mode,
                return_url=return_url(client), callback_url=listener.url,
                description="Order from the workbench notebook", installment_enabled=True,
            )  # fmt: skip
            run.object_id = session.id
            run.outcome["session_status"] = session.status
            run.say(f"session for {format_try(amount)} in {mode} mode: {session.status}")
            page = open_page(session.checkout_url)
            run.outcome["page_status"] = page.status_code
            run.say(f"buyer opens the hosted page: {page.status_code}")
            if mode == "qr":
                payload = qr_payload(session.checkout_url)
                run.outcome["qr_payload"] = payload
                fields = parse_tlv(payload) if payload else {}
                run.say(
                    f"the page shows a TR QR code: {fields.get('54')} in currency "
                    f"{fields.get('53')}, CRC matches: {bool(payload) and verify_crc(payload)}"
                )
                landing = pay_by_qr(session.checkout_url)
                run.say("buyer's bank app scans the TR QR code and pays")
            else:
                landing = pay_by_card(
                    session.checkout_url, card_number=number, installments=installments
                )
                run.say("buyer types the card and pays")
            shown = {k: landing.query[k] for k in ("outcome", "errorCode") if k in landing.query}
            run.outcome["redirect"] = shown
            run.say(f"back on the return page ({landing.status}) with {shown}")
            payment_id = landing.query.get("paymentId")
            if payment_id:
                payment = client.payments.retrieve(payment_id)
                run.outcome["status"] = payment.status
                run.say(f"merchant server reads the payment: {payment.status}")
                client.sandbox.tick()
                completed = listener.wait_for("session.completed", timeout=10)
                mine = [e for e in completed if e.data.get("sessionId") == session.id]
                run.outcome["session_event"] = bool(mine) and (
                    mine[0].data.get("paymentId") == payment_id
                )
                if mine:
                    run.note_state(session.id, "completed")
                run.outcome["events"] = [
                    e.type for e in listener.events if e.data.get("paymentId") == payment_id
                ]
                run.say(f"webhooks verified: {', '.join(run.outcome['events'])}")
            again = open_page(session.checkout_url)
            run.outcome["again_status"] = again.status_code
            run.say(f"the page once completed: {again.status_code}")
    return run
