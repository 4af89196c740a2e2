"""`SignatureCheck`: who signed the request, from X-Api-Key, X-Timestamp and X-Signature.

Public routes (`DEFAULT_PUBLIC_ROUTES` and the app's own) pass untouched, as does a
request without X-Api-Key to a route that also takes the admin token instead
(`ADMIN_OR_SIGNED_ROUTES`: the route checks the token). Any other
request needs X-Api-Key naming a key of this environment, not revoked (SVC-GW-1003),
then a timestamp and signature that `workbench.signing.verify` accepts over the body as
received (SVC-GW-1001 / 1002: the wall clock, a constant-time comparison). The caller
it authenticated as goes on in the request state (`RequestState.caller`, with its key
record in `RequestState.key` for the gates after this layer).

A key's record is kept between requests (`KeyCache`). On PostgreSQL a kept record is
only a guess, since another worker may have changed the row: the request is served on
it, but never refused on it, and the `Caller` carries it (`Caller.guess`) for whoever
acts for the caller to confirm: the card charge inside its own transaction, any other
route through its `CallerDep`, this layer itself before an answer starts that nobody
confirmed. When the row differs, `StaleKey` comes back here before anything was written
or sent, and the request is authenticated again from the database, from the start:
the layers after this one run again (the rate limit takes no second token under the
same limit: `RequestState.rate_token_taken`).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from http import HTTPMethod
from typing import TYPE_CHECKING, NamedTuple, Protocol

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from workbench.sandbox.context import (
    Caller,
    KeyGuess,
    RequestState,
    header_text,
    request_header,
    request_headers,
    request_state,
)
from workbench.sandbox.edge.body import replaying
from workbench.sandbox.errors import error_response
from workbench.sandbox.keys import KeyRecord, StaleKey, look_up
from workbench.sandbox.merchant_secrets import open_secret_key
from workbench.signing import SignatureMismatch, TimestampInvalid, verify

if TYPE_CHECKING:
    from workbench.sandbox.edge.keycache import KeyCache
    from workbench.sandbox.sealing import Sealer
    from workbench.sandbox.storage import Database

__all__ = ["ADMIN_OR_SIGNED_ROUTES", "DEFAULT_PUBLIC_ROUTES", "KeyLookup", "SignatureCheck"]

#: Routes that take no signature: (method or "*", path regex).
DEFAULT_PUBLIC_ROUTES: tuple[tuple[str, str], ...] = (
    ("GET", r"^/v1/payments/[^/]+/public-status$"),
    ("*", r"^/v1/public/"),
    ("*", r"^/checkout(/|$)"),
    ("*", r"^/sandbox/acs/"),
    ("GET", r"^/(openapi\.json|docs|redoc|healthz)$"),
    ("GET", r"^/docs/"),
    ("GET", r"^/static/"),
    # Merchants on demand: open on loopback, the admin token beyond (the route checks).
    ("POST", r"^/sandbox/merchants$"),
    ("GET", r"^/sandbox/merchants$"),
)

#: Routes signed by a merchant's own key or, without X-Api-Key, carrying the admin
#: token instead: (method, path regex).
ADMIN_OR_SIGNED_ROUTES: tuple[tuple[str, str], ...] = (("DELETE", r"^/sandbox/merchants/[^/]+$"),)
_ADMIN_OR_SIGNED = {
    method: re.compile("|".join(f"(?:{p})" for m, p in ADMIN_OR_SIGNED_ROUTES if m == method))
    for method, _ in ADMIN_OR_SIGNED_ROUTES
}


class KeyLookup(Protocol):
    """Where `SignatureCheck` finds key records: the database and the records kept.

    They exist once the app has started (its startup opens the database), after the
    app built its middleware, so they are read per request.
    """

    @property
    def db(self) -> Database:
        """The sandbox database."""
        ...

    @property
    def keys(self) -> KeyCache[KeyRecord]:
        """Key records kept between requests."""
        ...

    @property
    def sealer(self) -> Sealer:
        """Opens the sealed secret keys."""
        ...


class _Found(NamedTuple):
    """An authenticated request's key record, and whether it is a guess."""

    record: KeyRecord
    guessed: bool


class SignatureCheck:
    """Authenticate signed requests; leave public routes alone.

    Args:
        app: the wrapped application.
        sandbox: the running sandbox's database and key records.
        public_routes: extra (method or "*", path regex) pairs that need no signature.
    """

    def __init__(
        self, app: ASGIApp, sandbox: KeyLookup, *, public_routes: Iterable[tuple[str, str]] = ()
    ) -> None:
        self.app = app
        self.sandbox = sandbox
        self.public = (*DEFAULT_PUBLIC_ROUTES, *public_routes)
        # One search per request rather than one per public route. Built here for the
        # standard methods, so a bad pattern fails at construction, not on a request.
        self._public_by_method: dict[str, re.Pattern[str]] = {
            str(method): self._public_pattern(method) for method in HTTPMethod
        }

    def _public_pattern(self, method: str) -> re.Pattern[str]:
        patterns = [f"(?:{p})" for m, p in self.public if m in ("*", method)]
        return re.compile("|".join(patterns) or "(?!)")

    def _is_public(self, method: str, path: str) -> bool:
        rx = self._public_by_method.get(method)
        if rx is None:  # a method outside the standard ones (the HTTP parser knows a few)
            rx = self._public_by_method[method] = self._public_pattern(method)
        return rx.search(path) is not None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if (
            scope["type"] != "http"
            or self._is_public(str(scope["method"]), str(scope["path"]))
            or self._admin_instead(scope)
        ):
            await self.app(scope, receive, send)
            return
        state = request_state(scope)
        try:
            await self._serve(scope, receive, send, state, guess=True)
        except StaleKey:
            # The guessed key record was out of date; nothing was written or sent.
            self.sandbox.keys.discard(request_header(scope, b"x-api-key") or "")
            state.caller = state.key = None
            await self._serve(scope, replaying(state.body, receive), send, state, guess=False)

    @staticmethod
    def _admin_instead(scope: Scope) -> bool:
        """An unsigned request to a route that takes the admin token instead."""
        rx = _ADMIN_OR_SIGNED.get(str(scope["method"]))
        return (
            rx is not None
            and rx.search(str(scope["path"])) is not None
            and request_header(scope, b"x-api-key") is None
        )

    async def _serve(
        self, scope: Scope, receive: Receive, send: Send, state: RequestState, *, guess: bool
    ) -> None:
        """Authenticate and pass on a signed request (``guess``: see the module doc).

        Raises:
            StaleKey: on a guessed key record, something would have been refused, or a
                layer after this one found the record out of date.
        """
        raw_path = scope.get("raw_path")
        path = raw_path.decode("latin-1") if raw_path else str(scope["path"])
        headers = request_headers(scope)
        found = await self._authenticate(
            headers, str(scope["method"]), path, state.body, guess=guess
        )
        if not isinstance(found, _Found):
            code, message = found
            await error_response(code, message, state.request_id)(scope, receive, send)
            return
        record, guessed = found
        state.key = record
        state.caller = Caller(
            record.api_key,
            record.merchant_id,
            record.store_id,
            state.request_id,
            KeyGuess(record) if guessed else None,
        )
        await self.app(scope, receive, self._confirming(state, send) if guessed else send)

    def _confirming(self, state: RequestState, send: Send) -> Send:
        """``send`` that confirms the caller's guessed key record before an answer starts,
        unless a layer or the route did (`StaleKey` before anything left)."""
        db = self.sandbox.db

        async def send_confirmed(message: Message) -> None:
            caller = state.caller
            if message["type"] == "http.response.start" and caller and caller.unconfirmed:
                await caller.confirm_now(db)
            await send(message)

        return send_confirmed

    async def _authenticate(
        self, headers: dict[bytes, bytes], method: str, path: str, body: bytes, *, guess: bool
    ) -> _Found | tuple[str, str]:
        """The key's record and whether it is a guess, or the refusal.

        ``guess``: a record kept on PostgreSQL may be used (if it is one that could
        serve the request: neither revoked nor with a fail-next switch pending).

        Raises:
            StaleKey: the signature does not verify against a guessed record's secret.
        """
        api_key = header_text(headers.get(b"x-api-key"))
        if not api_key:
            return "SVC-GW-1003", "X-Api-Key is missing"
        keys = self.sandbox.keys
        record = keys.get(api_key)
        guessed = False
        if record is not None and keys.confirm:
            guessed = guess and not record.revoked and record.fail_next is None
            if not guessed:
                record = None
        if record is None:
            stamp = keys.stamp()
            db = self.sandbox.db
            record = await db.in_thread(functools.partial(look_up, db, api_key))
            if record is not None:
                keys.put(record, stamp)
        if record is None:
            return "SVC-GW-1003", "X-Api-Key is not a key of this environment"
        if record.revoked:
            return "SVC-GW-1003", "X-Api-Key has been revoked"
        secret = open_secret_key(self.sandbox.sealer, record.api_key, record.secret_key)
        if secret is None:
            return (
                "SVC-GW-1003",
                "X-Api-Key's secret was sealed under another key file than this sandbox's",
            )
        try:
            verify(
                secret,
                signature=header_text(headers.get(b"x-signature")),
                timestamp=header_text(headers.get(b"x-timestamp")),
                method=method,
                path=path,
                body=body,
            )
        except TimestampInvalid as exc:
            return "SVC-GW-1001", str(exc)
        except SignatureMismatch:
            if guessed:
                raise StaleKey from None  # the secret may have changed since
            return (
                "SVC-GW-1002",
                "X-Signature does not match the canonical string "
                "(timestamp, method, path without query, body SHA-256)",
            )
        return _Found(record, guessed)
