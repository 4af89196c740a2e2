"""From a raw `Exchange` to the row the request log keeps: redacted, then shaped.

Runs in the writer, off the request's path. What is kept:

- the path served, its query, with bearer segments cut (`workbench.sandbox.redaction`,
  `workbench.spec.redaction`);
- the request's headers, X-Signature cut to its first 8 hex characters, ``Authorization``
  and ``Cookie`` replaced, anything shaped like a secret key, a full signature or a card
  number replaced;
- both bodies as text, JSON re-indented after its secret fields (card number, CVC,
  secret keys, webhook secrets, portal hashes, pares) and secret-looking text were
  replaced by ``[redacted]``: card data and secrets are never stored;
- for a signature refusal, its diagnosis (`workbench.sandbox.requestlog.diagnosis`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from workbench.sandbox.exchanges import Exchange
from workbench.sandbox.redaction import redact_path
from workbench.sandbox.requestlog.diagnosis import SIGNATURE_CODES, signature_diagnosis
from workbench.spec.redaction import REDACTED, Redactor

__all__ = ["SIGNATURE_SHOWN", "Signer", "envelope_code", "row_of"]

#: How many hex characters of X-Signature a stored request keeps.
SIGNATURE_SHOWN = 8
#: Request headers replaced whole.
_HIDDEN_HEADERS = frozenset({b"authorization", b"cookie", b"proxy-authorization"})


@dataclass(frozen=True, slots=True)
class Signer:
    """A key's merchant and opened secret, for a request refused before it had a caller.

    Attributes:
        merchant_id: the key's merchant.
        secret_key: its secret (``None``: it would not open); kept out of ``repr``.
    """

    merchant_id: str
    secret_key: str | None

    def __repr__(self) -> str:
        return f"Signer({self.merchant_id!r})"


def envelope_code(body: bytes) -> tuple[str | None, str]:
    """The error envelope's ``code`` and ``message`` in ``body`` (``None``: no envelope)."""
    try:
        value = json.loads(body)
    except ValueError:
        return None, ""
    if isinstance(value, dict):
        code, message = value.get("code"), value.get("message")
        if isinstance(code, str):
            return code, message if isinstance(message, str) else ""
    return None, ""


def _text(body: bytes, redactor: Redactor) -> str:
    """A body as redacted text: JSON re-indented, anything else as decoded."""
    if not body:
        return ""
    try:
        value = json.loads(body)
    except ValueError:
        return redactor.text(body.decode("utf-8", "replace"))
    return json.dumps(redactor.json(value), indent=2, ensure_ascii=False)


def _headers(headers: list[tuple[bytes, bytes]], redactor: Redactor) -> list[list[str]]:
    shown = []
    for raw_name, raw_value in headers:
        name = raw_name.decode("latin-1").lower()
        value = raw_value.decode("latin-1")
        if raw_name == b"x-signature":
            value = value[:SIGNATURE_SHOWN] + "\u2026" if value else value
        elif raw_name in _HIDDEN_HEADERS:
            value = REDACTED
        else:
            value = redactor.text(value)
        shown.append([name, value])
    return shown


def _header(headers: list[tuple[bytes, bytes]], name: bytes) -> str | None:
    for key, value in headers:
        if key == name:
            return value.decode("latin-1")
    return None


def row_of(exchange: Exchange, merchant_id: str, signer: Signer | None) -> dict[str, Any]:
    """The request log's row for ``exchange``, redacted.

    Args:
        exchange: the request and its answer as they went.
        merchant_id: the merchant whose log keeps it.
        signer: for a request refused before it had a caller, its key's merchant and
            secret (to diagnose a signature refusal, and to cut that secret out should
            it appear anywhere).
    """
    secret = signer.secret_key if signer is not None else None
    redactor = Redactor((secret,) if secret else ())
    code, message = envelope_code(exchange.response_body) if exchange.status >= 400 else (None, "")
    query = exchange.query.decode("latin-1")
    path = exchange.path + (f"?{query}" if query else "")
    diagnosis = None
    if code in SIGNATURE_CODES and signer is not None:
        url = exchange.raw_path + (f"?{query}" if query else "")
        diagnosis = signature_diagnosis(
            code=code,
            message=message,
            secret_key=secret,
            api_key=exchange.api_key,
            timestamp=_header(exchange.headers, b"x-timestamp"),
            signature=_header(exchange.headers, b"x-signature"),
            method=exchange.method,
            url=redact_path(redactor.path(url)),
            body=exchange.body,
        )
    return {
        "merchant_id": merchant_id,
        "request_id": exchange.request_id,
        "at": datetime.fromtimestamp(exchange.at, UTC),
        "method": exchange.method[:16],
        "path": redact_path(redactor.path(path)),
        "status": exchange.status,
        "code": code[:32] if code else None,
        "idempotency_key": (_header(exchange.headers, b"idempotency-key") or "")[:255] or None,
        "replayed": _header(exchange.response_headers, b"idempotent-replayed") == "true",
        "latency_us": round(exchange.latency * 1_000_000),
        "request_headers": json.dumps(_headers(exchange.headers, redactor), ensure_ascii=False),
        "request_body": _text(exchange.body, redactor),
        "response_body": _text(exchange.response_body, redactor),
        "diagnosis": json.dumps(diagnosis, ensure_ascii=False) if diagnosis else None,
    }
