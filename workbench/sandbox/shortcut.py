"""`ChargeShortcut`: the card charge answered without FastAPI's per-request machinery.

The card charge is the sandbox's hottest route, and FastAPI's routing, dependency
solving and body handling cost about a quarter of it. This pure ASGI layer sits inside
the authentication middleware and answers ``POST /v1/payments/card`` itself when the
request is well formed: the same `ChargeRequest` model validates the same parsed JSON,
and the answer is the route's own (`workbench.sandbox.payments.charging.answer_charge`).
Anything it is not sure of (a body that does not validate, an odd Content-Type or
Idempotency-Key) goes on to the FastAPI route, which gives the error exactly as before;
the route also keeps the OpenAPI document.

On PostgreSQL the caller's key record may be a guess (`workbench.sandbox.auth`): the
charge's transaction confirms it first (`auth.confirm_key`, whose read goes to the
server with the charge's own), and a request passed on to the route is confirmed first
(`auth.confirm_guess`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from pydantic import ValidationError
from starlette.datastructures import Headers
from starlette.types import ASGIApp, Receive, Scope, Send

from workbench.sandbox import auth
from workbench.sandbox.context import Caller, base_url_of
from workbench.sandbox.errors import ServiceError, error_response
from workbench.sandbox.payments.charging import METHOD, PATH, answer_charge
from workbench.sandbox.payments.models import ChargeRequest
from workbench.spec import is_uuid4

if TYPE_CHECKING:
    from workbench.sandbox.storage import Database

__all__ = ["METHOD", "PATH", "ChargeShortcut", "Running"]


class Running(Protocol):
    """What the shortcut uses of a running sandbox: its database, open once the app has
    started (after the app built its middleware), so it is read per request."""

    @property
    def db(self) -> Database:
        """The sandbox database."""
        ...


class ChargeShortcut:
    """Answer well-formed card charges directly; pass everything else on.

    Args:
        app: the wrapped application (FastAPI's router and the charge route).
        sandbox: the running sandbox's database.
        public_base_url: the configured address clients reach the sandbox at, if any.
    """

    def __init__(self, app: ASGIApp, sandbox: Running, public_base_url: str | None) -> None:
        self.app = app
        self.sandbox = sandbox
        self.public_base_url = public_base_url

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != METHOD or scope["path"] != PATH:
            await self.app(scope, receive, send)
            return
        request = self._parse(scope)
        if request is None:
            await auth.confirm_guess(self.sandbox.db, scope)
            await self.app(scope, receive, send)
            return
        caller, body, key, base = request
        try:
            reply = await answer_charge(
                self.sandbox.db, caller, body, key, base, guess=auth.guessed_key(scope)
            )
        except ServiceError as exc:
            response = error_response(exc.code, exc.message, caller.request_id, exc.headers)
        else:
            response = reply.to_response(caller.request_id)
        await response(scope, receive, send)

    def _parse(self, scope: Scope) -> tuple[Caller, ChargeRequest, str | None, str] | None:
        """The validated request, or ``None`` to leave it to the FastAPI route."""
        state = scope.get("state") or {}
        caller = state.get("caller")
        raw = state.get("raw_body")
        if not isinstance(caller, Caller) or not isinstance(raw, bytes):
            return None
        if scope.get("raw_path", PATH.encode()) != PATH.encode() or scope.get("query_string"):
            return None
        headers = Headers(scope=scope)
        if headers.get("content-type", "").split(";")[0].strip() != "application/json":
            return None
        key = headers.get("idempotency-key")
        if key is not None and not is_uuid4(key):
            return None
        data = state.get("json_body")  # parsed once, by `jsonbody`'s rule, in AuthMiddleware
        try:
            body = ChargeRequest.model_validate(data) if isinstance(data, dict) else None
        except ValidationError:
            return None
        if body is None:
            return None
        return caller, body, key, base_url_of(scope, self.public_base_url)
