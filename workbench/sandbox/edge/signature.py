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
acts for the caller to confirm: the one door of every idempotent write inside its own
transaction, any other route through its `CallerDep`, a gate before it refuses, this
layer itself before an answer starts that nobody confirmed. A signature that does not
verify against a guessed secret is checked again here, against the row read afresh.
When a confirmation finds the row changed, the request is settled on the fresh record
in one place (`Caller.settle`): this layer's check is asked again first (the fresh
record authenticates the request, or its refusal is the answer), then each gate the
request passed, in order; nothing runs twice, and no layer is entered again.
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
    Refusal,
    RequestState,
    header_text,
    request_header,
    request_headers,
    request_state,
)
from workbench.sandbox.errors import error_response
from workbench.sandbox.keys import KeyRecord, look_up
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
        raw_path = scope.get("raw_path")
        path = raw_path.decode("latin-1") if raw_path else str(scope["path"])
        headers = request_headers(scope)
        method = str(scope["method"])
        found = await self._authenticate(headers, method, path, state.body)
        if not isinstance(found, _Found):
            code, message = found
            await error_response(code, message, state.request_id)(scope, receive, send)
            return
        record, guessed = found
        state.key = record
        guess = None
        if guessed:
            guess = KeyGuess(record)
            guess.rechecks.append(functools.partial(self._recheck, state, headers, method, path))
        state.caller = Caller(
            record.api_key, record.merchant_id, record.store_id, state.request_id, guess
        )
        await self.app(
            scope, receive, self._confirming(state, scope, receive, send) if guessed else send
        )

    @staticmethod
    def _admin_instead(scope: Scope) -> bool:
        """An unsigned request to a route that takes the admin token instead."""
        rx = _ADMIN_OR_SIGNED.get(str(scope["method"]))
        return (
            rx is not None
            and rx.search(str(scope["path"])) is not None
            and request_header(scope, b"x-api-key") is None
        )

    async def _recheck(
        self,
        state: RequestState,
        headers: dict[bytes, bytes],
        method: str,
        path: str,
        fresh: KeyRecord | None,
    ) -> Refusal | None:
        """This layer's check again, on the key's record read afresh after a stale guess:
        the refusal, or the request authenticated as the fresh record's caller."""
        if fresh is None:
            self.sandbox.keys.discard(header_text(headers.get(b"x-api-key")) or "")
            return "SVC-GW-1003", "X-Api-Key is not a key of this environment", None
        self.sandbox.keys.discard(fresh.api_key)  # out of date: the next request reads it
        refusal = self._verify(fresh, headers, method, path, state.body)
        if refusal is not None:
            return (*refusal, None)
        state.key = fresh
        state.caller = Caller(fresh.api_key, fresh.merchant_id, fresh.store_id, state.request_id)
        return None

    def _confirming(self, state: RequestState, scope: Scope, receive: Receive, send: Send) -> Send:
        """``send`` that confirms the caller's guessed key record before an answer starts,
        unless a layer or the route did; when the record changed, the request is settled
        on the fresh one, whose refusal, if any, is sent instead of the answer."""
        db = self.sandbox.db
        replaced = False

        async def send_confirmed(message: Message) -> None:
            nonlocal replaced
            if replaced:  # the answer was replaced by the settled request's refusal
                return
            caller = state.caller
            if message["type"] == "http.response.start" and caller and caller.unconfirmed:
                stale = await caller.confirm_now(db)
                refusal = None if stale is None else (await caller.settle(stale))[1]
                if refusal is not None:
                    replaced = True
                    code, text, headers = refusal
                    await error_response(code, text, state.request_id, headers)(
                        scope, receive, send
                    )
                    return
            await send(message)

        return send_confirmed

    async def _authenticate(
        self, headers: dict[bytes, bytes], method: str, path: str, body: bytes
    ) -> _Found | tuple[str, str]:
        """The key's record and whether it is a guess, or the refusal.

        A record kept on PostgreSQL may be used as a guess if it is one that could serve
        the request: neither revoked nor with a fail-next switch pending, and with a
        secret the signature verifies against (else the row is read afresh).
        """
        api_key = header_text(headers.get(b"x-api-key"))
        if not api_key:
            return "SVC-GW-1003", "X-Api-Key is missing"
        keys = self.sandbox.keys
        record = keys.get(api_key)
        if record is not None and keys.confirm:
            if (
                not record.revoked
                and record.fail_next is None
                and self._verify(record, headers, method, path, body) is None
            ):
                return _Found(record, guessed=True)
            keys.discard(api_key)
            record = None
        if record is None:
            stamp = keys.stamp()
            db = self.sandbox.db
            record = await db.in_thread(functools.partial(look_up, db, api_key))
            if record is None:
                return "SVC-GW-1003", "X-Api-Key is not a key of this environment"
            keys.put(record, stamp)
        refusal = self._verify(record, headers, method, path, body)
        return _Found(record, guessed=False) if refusal is None else refusal

    def _verify(
        self, record: KeyRecord, headers: dict[bytes, bytes], method: str, path: str, body: bytes
    ) -> tuple[str, str] | None:
        """The refusal of a request signed (or not) with ``record``'s key, else ``None``."""
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
            return (
                "SVC-GW-1002",
                "X-Signature does not match the canonical string "
                "(timestamp, method, path without query, body SHA-256)",
            )
        return None
