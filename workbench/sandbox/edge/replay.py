"""Strict replay mode (opt-in): a signature is accepted once.

The spec's scheme has no nonce: a captured request verifies again for as long as its
``X-Timestamp`` is within five minutes, and ``Idempotency-Key`` is not signed. That is
the service's design, so the sandbox keeps it by default. With
``SandboxConfig.strict_replay`` (``workbench sandbox --strict-replay``) it remembers
every signature it accepted on a state-changing request until the timestamp window
closes, in the database so that every ``--workers`` process sees it, and refuses a
second use with SVC-GW-1005. Only a SHA-256 of the signature is stored. The
reconciler forgets rows whose window has closed (`ReplayPurgeWork`). The check is the
middleware `StrictReplay`, right after the signature's.
"""

from __future__ import annotations

import functools
import hashlib
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Protocol

import sqlalchemy as sa
from starlette.datastructures import Headers
from starlette.types import ASGIApp, Receive, Scope, Send

from workbench.sandbox.clock import wall_now
from workbench.sandbox.context import request_state
from workbench.sandbox.errors import error_response
from workbench.sandbox.storage import UTCDateTime, insert_if_absent, metadata
from workbench.signing import parse_timestamp
from workbench.spec.limits import TIMESTAMP_SKEW_SECONDS

if TYPE_CHECKING:
    from workbench.sandbox.storage import Database

__all__ = [
    "SAFE_METHODS",
    "ReplayPurgeWork",
    "ReplayStore",
    "StrictReplay",
    "accepted_signatures",
    "first_use",
]

#: Methods whose replay changes nothing; strict mode lets their signatures repeat, since
#: two identical reads in the same second (a status poll) share one signature.
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})

accepted_signatures = sa.Table(
    "accepted_signatures",
    metadata,
    sa.Column("digest", sa.String(64), primary_key=True),
    sa.Column("merchant_id", sa.String(64), nullable=False, index=True),
    sa.Column("expires_at", UTCDateTime, nullable=False),
)


def first_use(db: Database, merchant_id: str, signature: str, timestamp: str) -> bool:
    """Record an accepted signature; ``False`` when it was recorded before (a replay).

    Args:
        db: the sandbox database.
        merchant_id: the signing key's merchant (for the per-merchant purge).
        signature: the ``X-Signature`` just verified.
        timestamp: its ``X-Timestamp`` (already checked): the row lives until that time
            plus the skew window, after which the signature no longer verifies anyway.
    """
    digest = hashlib.sha256(signature.encode("ascii", "replace")).hexdigest()
    # One second past the inclusive edge of the window.
    expires = parse_timestamp(timestamp) + timedelta(seconds=TIMESTAMP_SKEW_SECONDS + 1)
    row = {"digest": digest, "merchant_id": merchant_id, "expires_at": expires}
    with db.write() as conn:
        return insert_if_absent(conn, accepted_signatures, row, key=["digest"])


class ReplayPurgeWork:
    """Reconciler work: forget signatures whose timestamp window has closed (wall clock).

    Args:
        db: the sandbox database.
    """

    name = "replay_purge"

    def __init__(self, db: Database) -> None:
        self.db = db

    def pending_merchants(self, conn: sa.Connection) -> set[str]:
        """Merchants with a row past its window."""
        return set(
            conn.execute(
                sa.select(accepted_signatures.c.merchant_id)
                .where(accepted_signatures.c.expires_at <= wall_now())
                .distinct()
            ).scalars()
        )

    def next_due(self, conn: sa.Connection, merchant_id: str) -> datetime | None:
        """Never drives a clock advance: the window is wall-clock time."""
        return None

    def run(self, merchant_id: str, now: datetime, deadline: float) -> int:
        """Delete the merchant's rows that can no longer match a valid request."""
        t = accepted_signatures
        with self.db.write() as conn:
            result = conn.execute(
                sa.delete(t).where(t.c.merchant_id == merchant_id, t.c.expires_at <= wall_now())
            )
        return int(result.rowcount)


class ReplayStore(Protocol):
    """What `StrictReplay` uses of the running sandbox: its database, open once started."""

    @property
    def db(self) -> Database:
        """The sandbox database."""
        ...


class StrictReplay:
    """Refuse (SVC-GW-1005) a signature accepted before on a state-changing request.

    Added to the app only in strict replay mode. A request authenticated again after a
    stale key guess (`workbench.sandbox.edge.signature`) recorded its signature on its
    first pass (`RequestState.signature_recorded`) and goes on.

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
        if not state.signature_recorded:
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
            state.signature_recorded = True  # by this request: a retry goes on
        await self.app(scope, receive, send)
