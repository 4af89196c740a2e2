"""The sandbox's 3-D Secure access control server: the challenge's address, signed ``pares``.

A ``pares`` is ``<base64url JSON claims>.<hex HMAC-SHA256 of that text>`` under a
secret the sandbox generates once per database. Its claims name the payment, the
``correlationId`` and the result (``Y`` passed, ``N`` failed); `read_pares` returns
them only when the MAC matches, so a forged or edited ``pares`` is refused.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
from typing import Any
from urllib.parse import urlencode

import sqlalchemy as sa

from workbench.sandbox import tables
from workbench.sandbox.cards import CHALLENGE_CODE
from workbench.sandbox.errors import ServiceError
from workbench.sandbox.payments.tables import payments

__all__ = [
    "challenge_result",
    "challenge_url",
    "ensure_acs_secret",
    "make_pares",
    "read_pares",
]


def challenge_url(base_url: str, payment_id: str, correlation_id: str) -> str:
    """The address of the sandbox ACS page for a payment's 3-D Secure challenge."""
    return f"{base_url}/sandbox/acs/{payment_id}?{urlencode({'correlationId': correlation_id})}"


def ensure_acs_secret(conn: sa.Connection) -> str:
    """The database's ACS signing secret, created on first use."""
    row = conn.execute(sa.select(tables.meta.c.value).where(tables.meta.c.key == "acs_secret"))
    value = row.scalar_one_or_none()
    if value is None:
        value = secrets.token_hex(32)
        conn.execute(sa.insert(tables.meta).values(key="acs_secret", value=value))
    return str(value)


def _mac(secret: str, text: str) -> str:
    return hmac.new(secret.encode(), text.encode("ascii"), hashlib.sha256).hexdigest()


def make_pares(secret: str, payment_id: str, correlation_id: str, result: str) -> str:
    """Sign a challenge outcome."""
    claims = {"paymentId": payment_id, "correlationId": correlation_id, "result": result}
    text = base64.urlsafe_b64encode(json.dumps(claims, sort_keys=True).encode()).decode("ascii")
    return f"{text}.{_mac(secret, text)}"


def read_pares(secret: str, pares: str) -> dict[str, Any] | None:
    """The claims of a genuine ``pares``; ``None`` for anything forged or malformed."""
    text, _, mac = pares.partition(".")
    try:
        expected = _mac(secret, text)
    except UnicodeEncodeError:
        return None
    if not hmac.compare_digest(expected.encode(), mac.encode("ascii", "replace")):
        return None
    try:
        claims = json.loads(base64.urlsafe_b64decode(text.encode("ascii")))
    except ValueError:
        return None
    return claims if isinstance(claims, dict) else None


def challenge_result(
    conn: sa.Connection, secret: str, payment_id: str, correlation_id: str, code: str
) -> dict[str, str]:
    """Answer a buyer's challenge code with a signed ``pares`` (pass or fail).

    Raises:
        ServiceError: SVC-GW-4004 when no challenge is pending for this payment and correlationId.
    """
    p = payments
    row = conn.execute(
        sa.select(p.c.behaviour, p.c.status, p.c.correlation_id).where(p.c.id == payment_id)
    ).first()
    if row is None or row.correlation_id is None or row.correlation_id != correlation_id:
        raise ServiceError("SVC-GW-4004", "no 3-D Secure challenge with this correlationId")
    passed = row.behaviour == "3ds_challenge" and code == CHALLENGE_CODE
    pares = make_pares(secret, payment_id, correlation_id, "Y" if passed else "N")
    return {
        "paymentId": payment_id,
        "correlationId": correlation_id,
        "pares": pares,
        "result": "Y" if passed else "N",
    }
