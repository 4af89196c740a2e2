"""Who is signed in to the dashboard: a signed cookie, its CSRF token, its expiry.

The cookie holds a `Viewer` as JSON, its issue time, and an HMAC-SHA256 over both under
a key derived from the sandbox's key file (`workbench.sandbox.sealing.Sealer.derive`),
so every worker and every host that shares the file reads the others' sessions, a
restart keeps them, and nobody without the file can make one. It is sent ``HttpOnly``
and ``SameSite=Strict`` (``Secure`` over HTTPS), to ``/dashboard`` only. Nothing secret
is in it: the merchant and its public API key, whether it is the admin's, the form token.

Every form carries the session's CSRF token (`Viewer.csrf`); the sign-in form, before
there is a session, carries the token of a cookie of its own (`PRE_COOKIE`), compared
the same way (the "double submit" pattern, its cookie also signed).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import secrets
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace

__all__ = [
    "COOKIE",
    "PRE_COOKIE",
    "SESSION_SECONDS",
    "SessionCodec",
    "Viewer",
    "new_token",
]

#: The session cookie's name.
COOKIE = "wb_dashboard"
#: The sign-in form's own token cookie (before there is a session).
PRE_COOKIE = "wb_dashboard_form"
#: How long a session lasts after sign-in (then: back to the sign-in page).
SESSION_SECONDS = 8 * 3600
_SEP = "."


def new_token() -> str:
    """A fresh random token (a CSRF token, a one-time link)."""
    return secrets.token_urlsafe(24)


@dataclass(frozen=True, slots=True)
class Viewer:
    """Who a session belongs to.

    Attributes:
        merchant_id: the merchant whose pages it shows (``""``: the admin has not picked one).
        store_id: that merchant's store (of the key below).
        api_key: the public key the pages act with (its idempotency records, its caller).
        admin: signed in with the admin token: may pick any merchant.
        csrf: the token every form of the session carries.
        issued: when it was signed in (Unix seconds).
    """

    merchant_id: str
    store_id: str
    api_key: str
    admin: bool = False
    csrf: str = field(default_factory=new_token)
    issued: int = field(default_factory=lambda: int(time.time()))

    def for_merchant(self, merchant_id: str, store_id: str, api_key: str) -> Viewer:
        """The same session (admin's) showing another merchant."""
        return replace(self, merchant_id=merchant_id, store_id=store_id, api_key=api_key)

    def __repr__(self) -> str:
        return f"Viewer(merchant_id={self.merchant_id!r}, admin={self.admin})"


class SessionCodec:
    """Signs and reads the session cookie (and the sign-in form's token cookie).

    Args:
        key: the signing key (32 bytes, `Sealer.derive`).
        max_age: seconds a session lasts after sign-in.
        now: the clock (Unix seconds); a test moves it.
    """

    __slots__ = ("_key", "max_age", "now")

    def __init__(
        self, key: bytes, max_age: int = SESSION_SECONDS, now: Callable[[], float] = time.time
    ) -> None:
        self._key = key
        self.max_age = max_age
        self.now = now

    def _mac(self, purpose: str, text: str) -> str:
        digest = hmac.new(self._key, f"{purpose}\n{text}".encode(), hashlib.sha256).digest()
        return base64.urlsafe_b64encode(digest).decode("ascii").rstrip("=")

    def _sign(self, purpose: str, payload: dict[str, object]) -> str:
        text = base64.urlsafe_b64encode(json.dumps(payload, separators=(",", ":")).encode())
        body = text.decode("ascii").rstrip("=")
        return body + _SEP + self._mac(purpose, body)

    def _open(self, purpose: str, cookie: str | None) -> dict[str, object] | None:
        if not cookie or cookie.count(_SEP) != 1 or len(cookie) > 4096:
            return None
        body, mac = cookie.split(_SEP)
        if not hmac.compare_digest(mac, self._mac(purpose, body)):
            return None
        try:
            loaded = json.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))
        except (ValueError, binascii.Error):
            return None
        return loaded if isinstance(loaded, dict) else None

    def dumps(self, viewer: Viewer) -> str:
        """The cookie's value for ``viewer``."""
        return self._sign("session", asdict(viewer))

    def loads(self, cookie: str | None) -> Viewer | None:
        """The session of a cookie: ``None`` when missing, altered or expired."""
        data = self._open("session", cookie)
        if data is None:
            return None
        try:
            viewer = Viewer(
                merchant_id=str(data["merchant_id"]),
                store_id=str(data["store_id"]),
                api_key=str(data["api_key"]),
                admin=bool(data["admin"]),
                csrf=str(data["csrf"]),
                issued=int(str(data["issued"])),
            )
        except (KeyError, ValueError):
            return None
        age = self.now() - viewer.issued
        return viewer if 0 <= age < self.max_age else None

    def form_cookie(self, token: str) -> str:
        """The sign-in form's token cookie for ``token`` (`PRE_COOKIE`)."""
        return self._sign("form", {"t": token, "i": int(self.now())})

    def form_token(self, cookie: str | None) -> str | None:
        """The token of a sign-in form cookie (valid for an hour), or ``None``."""
        data = self._open("form", cookie)
        if data is None or not isinstance(data.get("t"), str):
            return None
        if self.now() - int(str(data.get("i", 0))) > 3600:
            return None
        return str(data["t"])
