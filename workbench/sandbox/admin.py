"""`AdminAccess`: who may make, list and delete merchants, and reset a built-in one.

On a sandbox only this machine can reach (`SandboxConfig.beyond_loopback` false), anyone
who reaches it may. Beyond loopback (a team host), the request must carry the admin
token as ``Authorization: Bearer <token>``. The token is the one given
(``workbench sandbox --admin-token``, ``WORKBENCH_SANDBOX_ADMIN_TOKEN``), else the one the
database keeps: made at the first start beyond loopback, shown once by the command that
started it, and kept only as its SHA-256 (the ``meta`` row ``admin_token_sha256``), so
every worker and host on the database checks the same token and none can show it again.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets

import sqlalchemy as sa

from workbench.sandbox import tables

__all__ = ["ADMIN_TOKEN_ROW", "AdminAccess", "ensure_admin_token"]

#: The ``meta`` row holding the SHA-256 of the database's admin token.
ADMIN_TOKEN_ROW = "admin_token_sha256"
_TOKEN_PREFIX = "wbadm_"


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def ensure_admin_token(conn: sa.Connection, *, create: bool) -> tuple[str | None, str | None]:
    """The digest of the database's admin token, and the token if it was made just now.

    Args:
        conn: a write transaction.
        create: make one when the database has none (a start beyond loopback).
    """
    meta = tables.meta
    digest = conn.execute(
        sa.select(meta.c.value).where(meta.c.key == ADMIN_TOKEN_ROW)
    ).scalar_one_or_none()
    if digest is not None or not create:
        return digest, None
    token = _TOKEN_PREFIX + secrets.token_urlsafe(24)
    conn.execute(sa.insert(meta).values(key=ADMIN_TOKEN_ROW, value=_digest(token)))
    return _digest(token), token


class AdminAccess:
    """Checks a request's admin token (kept out of ``repr``).

    Args:
        required: whether a token is needed at all (the sandbox is reachable beyond loopback).
        digest: the SHA-256 (hex) of the token that opens; ``None``: no token opens.
    """

    __slots__ = ("_digest", "required")

    def __init__(self, *, required: bool, digest: str | None) -> None:
        self.required = required
        self._digest = digest

    def allows(self, authorization: str | None) -> bool:
        """Whether a request with this ``Authorization`` header acts as the admin."""
        if not self.required:
            return True
        scheme, _, token = (authorization or "").partition(" ")
        if self._digest is None or scheme.lower() != "bearer" or not token.strip():
            return False
        return hmac.compare_digest(_digest(token.strip()), self._digest)

    def __repr__(self) -> str:
        return f"AdminAccess(required={self.required}, token={'set' if self._digest else 'none'})"
