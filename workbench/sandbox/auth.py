"""Pure ASGI middleware: read the body once, verify the signature, then the per-key gates.

First the received path is canonicalised as the spec's canonical string wants it:
under ``/v1/`` and ``/sandbox/`` a trailing slash is dropped, so ``/x/`` is verified
and routed as ``/x`` (never redirected). Then: body size (SVC-GW-4013), a NUL anywhere
(SVC-GW-4000), public route exemption,
X-Api-Key (SVC-GW-1003), timestamp and signature through `workbench.signing.verify`
(SVC-GW-1001 / 1002, the wall clock, constant-time comparison), in strict replay mode
a signature already accepted on a state-changing request (SVC-GW-1005,
`workbench.sandbox.replay`), then, outside
``/sandbox/`` control routes: rate limit (SVC-GW-1004 with Retry-After), a pending
fail-next, simulated latency; last, a JSON body naming a key twice is refused
(`workbench.sandbox.jsonbody`). The route sees the same body bytes the signature covered.

On PostgreSQL a key's record kept in memory (`KeyCache`) is only a guess: another worker
may have changed the row. Only a request whose next layer confirms it inside its own
transaction (`confirm_key`, or `confirm_guess` before anything else runs) is served on a
guess, and never refused on one; when the row turns out to differ, that layer raises
`StaleKey` before anything was written or sent, and the request is authenticated again
from the database, from the start. Such a retry runs the gates again: a rate-limit
token may then be taken twice for one request, never fewer than once.
"""

from __future__ import annotations

import asyncio
import functools
import re
from collections.abc import Iterable
from http import HTTPMethod
from typing import TYPE_CHECKING, NamedTuple, Protocol

import anyio.to_thread
import sqlalchemy as sa
from starlette.datastructures import Headers
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from workbench.sandbox import jsonbody, replay, tables
from workbench.sandbox.context import Caller, KeyGuess, RequestState, request_state
from workbench.sandbox.errors import error_response
from workbench.sandbox.keys import KeyRecord, StaleKey, look_up
from workbench.sandbox.replay import SAFE_METHODS
from workbench.signing import SignatureMismatch, TimestampInvalid, verify
from workbench.spec import limits

if TYPE_CHECKING:
    from workbench.sandbox.keycache import KeyCache
    from workbench.sandbox.ratelimit import RateLimiter
    from workbench.sandbox.storage import Database

__all__ = [
    "DEFAULT_PUBLIC_ROUTES",
    "AuthMiddleware",
    "Running",
    "canonicalise_path",
    "consume_fail_next",
]

#: Routes that take no signature: (method or "*", path regex).
DEFAULT_PUBLIC_ROUTES: tuple[tuple[str, str], ...] = (
    ("GET", r"^/v1/payments/[^/]+/public-status$"),
    ("*", r"^/v1/public/"),
    ("*", r"^/checkout(/|$)"),
    ("*", r"^/sandbox/acs/"),
    ("GET", r"^/(openapi\.json|docs|redoc|healthz)$"),
    ("GET", r"^/docs/"),
    ("GET", r"^/static/"),
)


#: Where the signed API lives: paths here lose a trailing slash before anything else.
_API_PREFIXES = ("/v1/", "/sandbox/")


def canonicalise_path(scope: Scope) -> None:
    """Drop a trailing slash from an API path in place (``path`` and ``raw_path``).

    The spec's canonical string has "no trailing slash", so a client that signs it
    right and sends ``/v1/subscriptions/`` must be verified and answered as
    ``/v1/subscriptions``. Static pages (``/docs/``) keep theirs.
    """
    path = str(scope["path"])
    if len(path) < 2 or not path.endswith("/") or not path.startswith(_API_PREFIXES):
        return
    scope["path"] = path.rstrip("/") or "/"
    raw = scope.get("raw_path")
    if raw:
        scope["raw_path"] = bytes(raw).rstrip(b"/") or b"/"


def consume_fail_next(db: Database, merchant_id: str, mode: str) -> str | None:
    """Take the merchant's pending fail-next switch, once; ``None`` if another took it.

    Blocking: run it in a thread.
    """
    m = tables.merchants
    with db.write() as conn:
        done = conn.execute(
            sa.update(m).where(m.c.id == merchant_id, m.c.fail_next == mode).values(fail_next=None)
        )
    return mode if done.rowcount == 1 else None


class Running(Protocol):
    """What authentication uses of a running sandbox.

    They exist once the app has started (its startup opens the database), after the
    app built its middleware: `AuthMiddleware` reads them per request.
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
    def limiter(self) -> RateLimiter:
        """The per-key rate limiter."""
        ...


class _BodyTooLarge(Exception):
    pass


class _Found(NamedTuple):
    """An authenticated request's key record, and whether it is a guess."""

    record: KeyRecord
    guessed: bool


def _replaying(body: bytes, receive: Receive) -> Receive:
    """``receive`` for the wrapped application: the body already read, then the rest."""
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay


async def _read_body(receive: Receive) -> bytes:
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            break
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limits.MAX_BODY_BYTES:
            raise _BodyTooLarge
        chunks.append(chunk)
        if not message.get("more_body", False):
            break
    return b"".join(chunks)


def _carries_nul(scope: Scope, body: bytes) -> bool:
    """Whether a NUL would reach a text field (PostgreSQL cannot store one; SQLite follows)."""
    query = bytes(scope.get("query_string", b""))
    return "\x00" in str(scope["path"]) or b"%00" in query or b"\\u0000" in body or b"\x00" in body


class AuthMiddleware:
    """Authenticate signed requests; leave public routes alone.

    Args:
        app: the wrapped application.
        sandbox: the running sandbox's database, key records and rate limiter.
        strict_replay: refuse a signature seen before on a state-changing request
            (`workbench.sandbox.replay`).
        latency_ms: simulated latency added to every gated request.
        public_routes: extra (method, path regex) pairs that need no signature.
    """

    def __init__(
        self,
        app: ASGIApp,
        sandbox: Running,
        *,
        strict_replay: bool = False,
        latency_ms: int = 0,
        public_routes: Iterable[tuple[str, str]] = (),
    ) -> None:
        self.app = app
        self.sandbox = sandbox
        self.strict_replay = strict_replay
        self.latency_ms = latency_ms
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
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        canonicalise_path(scope)
        state = request_state(scope)
        rid = state.request_id
        declared = Headers(scope=scope).get("content-length", "")
        try:
            if declared.isdigit() and int(declared) > limits.MAX_BODY_BYTES:
                raise _BodyTooLarge
            body = await _read_body(receive)
        except _BodyTooLarge:
            message = f"request body is larger than {limits.MAX_BODY_BYTES} bytes"
            await error_response("SVC-GW-4013", message, rid)(scope, receive, send)
            return
        if _carries_nul(scope, body):
            message = "NUL characters are not accepted in the path, query string or body"
            await error_response("SVC-GW-4000", message, rid)(scope, receive, send)
            return
        state.body = body
        if body and "content-type" not in Headers(scope=scope):
            # The spec says bodies are JSON; a client that omits the header still means it.
            scope["headers"] = [*scope["headers"], (b"content-type", b"application/json")]
        if self._is_public(str(scope["method"]), str(scope["path"])):
            await self._forward(scope, body, _replaying(body, receive), send, rid)
            return
        try:
            await self._serve(scope, body, receive, send, rid, guess=True)
        except StaleKey:
            # The guessed key record was out of date; nothing was written or sent.
            self.sandbox.keys.discard(Headers(scope=scope).get("x-api-key", ""))
            state.caller = None
            await self._serve(scope, body, receive, send, rid, guess=False)

    async def _serve(
        self, scope: Scope, body: bytes, receive: Receive, send: Send, rid: str, *, guess: bool
    ) -> None:
        """Authenticate, gate and pass on a signed request (``guess``: see the module doc).

        Raises:
            StaleKey: on a guessed key record, something would have been refused, or the
                wrapped application found the record out of date.
        """
        state = request_state(scope)
        method = str(scope["method"])
        raw_path = scope.get("raw_path")
        path = raw_path.decode("latin-1") if raw_path else str(scope["path"])
        headers = Headers(scope=scope)
        found = await self._authenticate(headers, method, path, body, guess=guess)
        if not isinstance(found, _Found):
            code, message, extra = found
            await error_response(code, message, rid, extra)(scope, receive, send)
            return
        record, guessed = found
        strict = self.strict_replay and method not in SAFE_METHODS
        if strict and not state.signature_recorded:
            if not await self._first_use(record, headers):
                message = (
                    "this signature was already accepted (strict replay mode): sign every "
                    "request afresh and never resend one"
                )
                await error_response("SVC-GW-1005", message, rid)(scope, receive, send)
                return
            state.signature_recorded = True  # by this request: a retry goes on
        state.caller = Caller(
            record.api_key,
            record.merchant_id,
            record.store_id,
            rid,
            KeyGuess(record) if guessed else None,
        )
        if not str(scope["path"]).startswith("/sandbox/"):
            gate = await self._gates(record)
            if gate is not None:
                if guessed:
                    raise StaleKey
                code, message, extra = gate
                await error_response(code, message, rid, extra)(scope, receive, send)
                return
        if guessed:
            send = self._confirming(state, send)
        await self._forward(scope, body, _replaying(body, receive), send, rid)

    def _confirming(self, state: RequestState, send: Send) -> Send:
        """``send`` that confirms the caller's guessed key record before an answer starts,
        unless the route confirmed it already (raising `StaleKey` before anything left)."""
        db = self.sandbox.db

        async def send_confirmed(message: Message) -> None:
            caller = state.caller
            if message["type"] == "http.response.start" and caller and caller.unconfirmed:
                await caller.confirm_now(db)
            await send(message)

        return send_confirmed

    async def _forward(
        self, scope: Scope, body: bytes, receive: Receive, send: Send, rid: str
    ) -> None:
        """Pass the request on, unless its JSON body breaks `jsonbody`'s rule."""
        refused = jsonbody.refusal(scope, body)
        if refused is not None:
            await error_response(*refused, rid)(scope, receive, send)
            return
        await self.app(scope, receive, send)

    async def _authenticate(
        self, headers: Headers, method: str, path: str, body: bytes, *, guess: bool
    ) -> _Found | tuple[str, str, dict[str, str]]:
        """The key's record and whether it is a guess, or the refusal.

        ``guess``: a record kept on PostgreSQL may be used (if it is one that could
        serve the request: neither revoked nor with a fail-next switch pending).

        Raises:
            StaleKey: the signature does not verify against a guessed record's secret.
        """
        api_key = headers.get("x-api-key")
        if not api_key:
            return "SVC-GW-1003", "X-Api-Key is missing", {}
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
            return "SVC-GW-1003", "X-Api-Key is not a key of this environment", {}
        if record.revoked:
            return "SVC-GW-1003", "X-Api-Key has been revoked", {}
        try:
            verify(
                record.secret_key,
                signature=headers.get("x-signature"),
                timestamp=headers.get("x-timestamp"),
                method=method,
                path=path,
                body=body,
            )
        except TimestampInvalid as exc:
            return "SVC-GW-1001", str(exc), {}
        except SignatureMismatch:
            if guessed:
                raise StaleKey from None  # the secret may have changed since
            return (
                "SVC-GW-1002",
                "X-Signature does not match the canonical string "
                "(timestamp, method, path without query, body SHA-256)",
                {},
            )
        return _Found(record, guessed)

    async def _first_use(self, record: KeyRecord, headers: Headers) -> bool:
        """Strict replay mode: record this verified signature; ``False`` for a replay."""
        db = self.sandbox.db
        work = functools.partial(
            replay.first_use,
            db,
            record.merchant_id,
            headers.get("x-signature", ""),
            headers.get("x-timestamp", ""),
        )
        return await db.run(work)

    async def _gates(self, record: KeyRecord) -> tuple[str, str, dict[str, str]] | None:
        limiter = self.sandbox.limiter
        wait: float | None = None
        if limiter.limit_for(record.rate_limit)[0] > 0:
            check = functools.partial(
                limiter.check, record.merchant_id, record.api_key, record.rate_limit
            )
            wait = await self.sandbox.db.in_thread(check) if limiter.shared else check()
        if wait is not None:
            retry = limiter.retry_after(wait)
            return "SVC-GW-1004", "rate limit exceeded for this API key", {"Retry-After": retry}
        if record.fail_next is not None:
            db = self.sandbox.db
            mode = await anyio.to_thread.run_sync(
                consume_fail_next, db, record.merchant_id, record.fail_next
            )
            if mode is not None:
                return await self._fail(mode)
        delay = record.latency_ms + self.latency_ms
        if delay > 0:
            await asyncio.sleep(delay / 1000)
        return None

    @staticmethod
    async def _fail(mode: str) -> tuple[str, str, dict[str, str]]:
        if mode == "429":
            return "SVC-GW-1004", "rate limited (sandbox fail-next)", {"Retry-After": "1"}
        if mode.startswith("timeout"):
            seconds = float(mode.partition(":")[2] or "10")
            await asyncio.sleep(seconds)
            return "SVC-GW-5030", "timed out (sandbox fail-next)", {}
        return "SVC-GW-5000", "internal error (sandbox fail-next)", {}
