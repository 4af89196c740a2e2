"""The flow behind notebook 01's "Try it" form: a first signed request, its canonical string,
and the errors a tampered body and a skewed timestamp give."""

from __future__ import annotations

import hmac
import json
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

from workbench.config import mask_key
from workbench.flows._run import APPROVED_CARD, Call, FlowRun, new_transaction_id, redact
from workbench.money import format_try
from workbench.signing import canonical_string, format_timestamp, sign, sign_request

if TYPE_CHECKING:
    from workbench._client import Client

__all__ = ["quickstart"]


def _json(content: bytes) -> object:
    return json.loads(content) if content else None


def _send_raw(
    client: Client, run: FlowRun, path: str, signed_body: bytes, sent_body: bytes, timestamp: str
) -> tuple[int, str]:
    """Sign ``signed_body`` but send ``sent_body``, outside the client, as a broken server would."""
    settings = client._settings
    headers = sign_request(
        api_key=settings.api_key, secret_key=settings.secret_key, method="POST",
        url=path, body=signed_body, timestamp=timestamp,
    ).as_dict()  # fmt: skip
    headers["Content-Type"] = "application/json"
    # Through the client's own connection pool (and transport): unsigned by it, sent as is.
    response = client._http.post(
        client.base_url + path, content=sent_body, headers=headers, timeout=10
    )
    body = response.json()
    code = str(body.get("code", "")) if isinstance(body, dict) else ""
    run.calls.append(
        Call(
            step=len(run.calls) + 1, method="POST", path=path, request=redact(_json(sent_body)),
            status=response.status_code, response=redact(body),
            request_id=response.headers.get("X-Request-Id"), idempotency_key=None, retries=0,
            replayed=False,
            dashboard_url=run.request_page(response.headers.get("X-Request-Id")),
        )
    )  # fmt: skip
    return response.status_code, code


def quickstart(
    client: Client,
    *,
    amount: int = 12_500,
    card_token: str = APPROVED_CARD,
    skew_minutes: int = 10,
) -> FlowRun:
    """Make a first signed charge, show its canonical string, then break the signature twice.

    Args:
        client: a configured client.
        amount: kuruş.
        card_token: the test card.
        skew_minutes: how far the skewed timestamp is from now (the service allows 5).

    Returns:
        The run; ``outcome`` holds ``status``, ``canonical_lines`` (the four lines of the
        first request's canonical string), ``signature_prefix`` (its first 8 hex digits),
        ``recomputed_matches`` (signing those lines again gives the same signature),
        ``tampered_code`` and ``skewed_code``.
    """
    params = {"amount": amount, "card_token": card_token, "skew_minutes": skew_minutes}
    run = FlowRun("quickstart", params)
    run.say(f"client ready, public key {mask_key(client._settings.api_key)}")
    with run.recording(client):
        charge = client.payments.charge_card(
            transaction_id=new_transaction_id(), amount=amount, card_token=card_token
        )
    run.object_id = charge.id
    run.say(f"signed charge {format_try(amount)}: {charge.http_status} {charge.status}")
    info = charge.response
    assert info is not None
    sent = info.http_response.request
    canonical = canonical_string(
        sent.headers["X-Timestamp"], sent.method, sent.url.path, sent.content
    )
    lines = canonical.split("\n")
    run.outcome.update(status=charge.status, canonical_lines=lines)
    run.say("canonical string: timestamp / method / path / sha256(body)")
    signature = sent.headers["X-Signature"]
    run.outcome["signature_prefix"] = signature[:8]
    again = sign(client._settings.secret_key, lines[0], lines[1], lines[2], sent.content)
    run.outcome["recomputed_matches"] = hmac.compare_digest(again, signature)
    run.say(f"X-Signature = HMAC-SHA256(secret key, canonical string): {len(signature)} hex digits")
    body = sent.content
    tampered = body.replace(str(amount).encode(), str(amount + 1).encode(), 1)
    status, code = _send_raw(client, run, "/v1/payments/card", body, tampered, format_timestamp())
    run.outcome["tampered_code"] = code
    run.say(f"body changed after signing: {status} {code}")
    old = format_timestamp(datetime.now(UTC) - timedelta(minutes=skew_minutes))
    fresh = body.replace(b"order-", b"order-x", 1)
    status, code = _send_raw(client, run, "/v1/payments/card", fresh, fresh, old)
    run.outcome["skewed_code"] = code
    run.say(f"timestamp {skew_minutes} minutes old: {status} {code}")
    return run
