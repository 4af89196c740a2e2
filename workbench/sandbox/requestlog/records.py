"""From a raw `Exchange` to the row the request log keeps: redacted, then shaped.

Runs in the writer, off the request's path. What is kept:

- the path served, its query, with bearer segments cut (`workbench.sandbox.redaction`,
  `workbench.spec.redaction`);
- the request's headers, X-Signature cut to its first 8 hex characters, ``Authorization``
  and ``Cookie`` replaced, anything shaped like a secret key, a full signature or a card
  number replaced;
- both bodies as text, after the values of their secret fields (card number, CVC,
  secret keys, webhook secrets, portal hashes, pares) and secret-looking text were
  replaced by ``[redacted]`` (`_text`): card data and secrets are never stored;
- for a signature refusal, its diagnosis (`workbench.sandbox.requestlog.diagnosis`).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from workbench.sandbox.exchanges import Exchange
from workbench.sandbox.redaction import redact_path
from workbench.sandbox.requestlog.diagnosis import SIGNATURE_CODES, signature_diagnosis
from workbench.spec.redaction import REDACTED, SECRET_FIELDS, Redactor

__all__ = ["SIGNATURE_SHOWN", "Signer", "envelope_code", "row_of"]

#: How many hex characters of X-Signature a stored request keeps.
SIGNATURE_SHOWN = 8
#: A JSON key whose value is a secret (`workbench.spec.redaction.SECRET_FIELDS`).
_SECRET_FIELD = re.compile(
    '"(?:' + "|".join(sorted(map(re.escape, SECRET_FIELDS))) + ')"', re.IGNORECASE
)
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
    """A body as redacted text.

    JSON that names no secret field and escapes nothing (``\\u``), which is what nearly
    every body is, keeps its text with the secret-shaped values replaced in it (secret
    keys, full signatures, card numbers, `Redactor.text`): nothing to decode or encode.
    Any other JSON is decoded, its secret fields replaced (`Redactor.json`) and encoded
    again; anything else is taken as text.
    """
    if not body:
        return ""
    text = body.decode("utf-8", "replace")
    if _SECRET_FIELD.search(text) is None and "\\u" not in text:
        return redactor.text(text)
    try:
        value = json.loads(body)
    except ValueError:
        return redactor.text(text)
    return json.dumps(redactor.json(value), ensure_ascii=False, separators=(",", ":"))


def _headers(headers: list[tuple[bytes, bytes]], redactor: Redactor) -> list[list[str]]:
    names = [name.decode("latin-1").lower() for name, _ in headers]
    # One pass of the redactor over every value (a header value holds no line break).
    values = redactor.text("\n".join(value.decode("latin-1") for _, value in headers))
    shown = []
    for (raw_name, raw_value), name, value in zip(headers, names, values.split("\n"), strict=True):
        if raw_name == b"x-signature":
            value = raw_value[:SIGNATURE_SHOWN].decode("latin-1") + "\u2026" if raw_value else ""
        elif raw_name in _HIDDEN_HEADERS:
            value = REDACTED
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
