"""Hosted checkout: a session in payment or TR QR mode, the buyer on the hosted page, the
redirect back to ``returnUrl``, and the signed webhook that confirms the payment."""

from __future__ import annotations

import html
import os
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal
from urllib.parse import parse_qs, urlsplit

import httpx
import pandas as pd

from workbench.emvco import parse_tlv, verify_crc
from workbench.flows._run import APPROVED_CARD, FlowRun, new_transaction_id
from workbench.money import format_try
from workbench.webhooks import WebhookListener

if TYPE_CHECKING:
    from workbench._client import Client

__all__ = ["RETURN_URL", "PageAddress", "checkout", "qr_fields", "show_page"]

#: Where the sandbox sends the buyer back (a merchant page; never fetched here).
RETURN_URL = "https://merchant.example/orders/return"
#: Set by ``workbench lab``: the notebook runs in front of a person, so pages may be shown.
ENV_INTERACTIVE = "WORKBENCH_INTERACTIVE"


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
_QR_PAYLOAD = re.compile(r'data-testid="qr-payload">([^<]+)<')


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


def _card_number(client: Client, card_token: str) -> str:
    """The test card number behind a test token (what the buyer types on the page)."""
    for card in client.sandbox.fixtures().test_cards:
        if card.token == card_token and card.number:
            return card.number
    raise ValueError(f"no test card number for {card_token}")


def checkout(
    client: Client,
    *,
    amount: int = 34_900,
    mode: Literal["payment", "qr"] = "payment",
    card_token: str = APPROVED_CARD,
    installments: int = 1,
) -> FlowRun:
    """Create a checkout session, complete it as the buyer, and wait for its webhook.

    Args:
        client: a configured client of the local sandbox (the buyer's steps post to its pages).
        amount: kuruş.
        mode: ``payment`` (card form) or ``qr`` (TR QR code paid by a bank app).
        card_token: the test card whose number the buyer types (``payment`` mode).
        installments: what the buyer picks on the page.

    Returns:
        The run; ``outcome`` holds ``session_status``, ``page_status``, ``redirect``
        (the query added to ``returnUrl``), ``status`` (the payment's public status),
        ``webhook`` (the type of the verified event), ``events`` (the types of the
        verified events of this checkout, in order), ``qr_payload`` (``qr`` mode: the
        EMVCo payload the page shows) and ``again_status`` (the page once the session
        is completed).
    """
    if mode not in ("payment", "qr"):
        raise ValueError("mode must be 'payment' or 'qr'")
    params = {"amount": amount, "mode": mode, "card_token": card_token,
              "installments": installments}  # fmt: skip
    run = FlowRun("checkout", params)
    with run.recording(client):
        fixtures = client.sandbox.fixtures()
        secret = fixtures.webhook_secret or ""
        number = _card_number(client, card_token) if mode == "payment" else ""
        with WebhookListener(secret) as listener:
            session = client.sessions.create(
                transaction_id=new_transaction_id(), amount=amount, mode=mode,
                return_url=RETURN_URL, callback_url=listener.url,
                description="Order from the workbench notebook", installment_enabled=True,
            )  # fmt: skip
            run.object_id = session.session_id
            run.outcome["session_status"] = session.status
            run.say(f"session for {format_try(amount)} in {mode} mode: {session.status}")
            with httpx.Client(timeout=10, follow_redirects=False) as browser:
                page = browser.get(session.checkout_url)
                run.outcome["page_status"] = page.status_code
                run.say(f"buyer opens the hosted page: {page.status_code} {_kind(page)}")
                if mode == "qr":
                    found = _QR_PAYLOAD.search(page.text)
                    payload = html.unescape(found.group(1)) if found else ""
                    run.outcome["qr_payload"] = payload
                    fields = parse_tlv(payload) if payload else {}
                    run.say(
                        f"the page shows a TR QR code: {fields.get('54')} in currency "
                        f"{fields.get('53')}, CRC matches: {bool(payload) and verify_crc(payload)}"
                    )
                if mode == "payment":
                    form = {"cardNumber": number, "expiry": "12/30", "cvc": "123",
                            "holder": "Ayse Yilmaz", "installments": str(installments)}  # fmt: skip
                    answer = browser.post(f"{session.checkout_url}/pay", data=form)
                    run.say("buyer types the card and pays")
                else:
                    answer = browser.post(f"{session.checkout_url}/qr")
                    run.say("buyer's bank app scans the TR QR code and pays")
                location = answer.headers.get("location", "")
                query = {k: v[0] for k, v in parse_qs(urlsplit(location).query).items()}
                shown = {k: query[k] for k in ("outcome", "errorCode") if k in query}
                run.outcome["redirect"] = shown
                run.say(f"page answers {answer.status_code}, back to returnUrl with {shown}")
                payment_id = query.get("paymentId")
                if payment_id:
                    status = client.payments.public_status(payment_id).status
                    run.outcome["status"] = status
                    run.say(f"merchant server reads the payment (public status): {status}")
                client.sandbox.tick()
                wanted = "payment.captured" if query.get("outcome") == "success" else None
                if wanted:
                    events = listener.wait_for(wanted, timeout=10)
                    mine = [e for e in events if e.data.get("paymentId") == payment_id]
                    run.outcome["webhook"] = mine[0].type if mine else None
                    run.say(f"webhook received and verified: {run.outcome['webhook']}")
                if payment_id:
                    listener.wait_for("session.completed", timeout=10)
                    run.outcome["events"] = [
                        e.type for e in listener.events if e.data.get("paymentId") == payment_id
                    ]
                    run.say(f"events of this checkout: {', '.join(run.outcome['events'])}")
                again = browser.get(session.checkout_url)
                run.outcome["again_status"] = again.status_code
                run.say(f"the page once completed: {again.status_code}")
    return run


def _kind(response: httpx.Response) -> str:
    return str(response.headers.get("content-type", "")).split(";")[0]
