"""Strict replay mode (opt-in): a signature is accepted once.

The spec's scheme has no nonce: a captured request verifies again for as long as its
``X-Timestamp`` is within five minutes, and ``Idempotency-Key`` is not signed. That is
the service's design, so the sandbox keeps it by default. With
``SandboxConfig.strict_replay`` (``workbench sandbox --strict-replay``) it remembers
every signature it accepted on a state-changing request until the timestamp window
closes, in the database so that every ``--workers`` process sees it, and refuses a
second use with SVC-GW-1005. The check is the middleware `StrictReplay`, right after
the signature's; what it remembers (only a SHA-256 of each signature), and the
reconciler's purge of it, live with storage in `workbench.sandbox.accepted_signatures`.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Protocol

from starlette.datastructures import Headers
from starlette.types import ASGIApp, Receive, Scope, Send

from workbench.sandbox.accepted_signatures import first_use
from workbench.sandbox.context import request_state
from workbench.sandbox.errors import error_response

if TYPE_CHECKING:
    from workbench.sandbox.storage import Database

__all__ = ["SAFE_METHODS", "ReplayStore", "StrictReplay"]

#: Methods whose replay changes nothing; strict mode lets their signatures repeat, since
#: two identical reads in the same second (a status poll) share one signature.
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


class ReplayStore(Protocol):
    """What `StrictReplay` uses of the running sandbox: its database, open once started."""

    @property
    def db(self) -> Database:
        """The sandbox database."""
        ...


class StrictReplay:
    """Refuse (SVC-GW-1005) a signature accepted before on a state-changing request.

    Added to the app only in strict replay mode. A request met once: one settled after
    a stale key guess is not sent through the layers again (`workbench.sandbox.context.
    Caller.settle`).

    Args:
        app: the wrapped application.
        sandbox: the running sandbox's database.
    """

    def __init__(self, app: ASGIApp, sandbox: ReplayStore) -> None:
        self.app = app
        self.sandbox = sandbox

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        state = request_state(scope) if scope["type"] == "http" else None
        if state is None or state.caller is None or scope["method"] in SAFE_METHODS:
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        db = self.sandbox.db
        work = functools.partial(
            first_use,
            db,
            state.caller.merchant_id,
            headers.get("x-signature", ""),
            headers.get("x-timestamp", ""),
        )
        if not await db.run(work):
            message = (
                "this signature was already accepted (strict replay mode): sign every "
                "request afresh and never resend one"
            )
            response = error_response("SVC-GW-1005", message, state.request_id)
            await response(scope, receive, send)
            return
        await self.app(scope, receive, send)
