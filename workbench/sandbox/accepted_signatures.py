"""The signatures strict replay mode accepted: their table, the first use, the purge.

With ``SandboxConfig.strict_replay`` the edge's `StrictReplay` refuses a signature
accepted before on a state-changing request (`workbench.sandbox.edge.replay`). What it
remembers lives here, in the database, so that every ``--workers`` process sees it: only
a SHA-256 of each signature, until its timestamp window closes. The reconciler forgets
rows whose window has closed (`ReplayPurgeWork`).
"""

from __future__ import annotations

import hashlib
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

import sqlalchemy as sa

from workbench.sandbox.clock import wall_now
from workbench.sandbox.storage import UTCDateTime, insert_if_absent, metadata
from workbench.signing import parse_timestamp
from workbench.spec.limits import TIMESTAMP_SKEW_SECONDS

if TYPE_CHECKING:
    from workbench.sandbox.storage import Database

__all__ = ["ReplayPurgeWork", "accepted_signatures", "first_use"]

accepted_signatures = sa.Table(
    "accepted_signatures",
    metadata,
    sa.Column("digest", sa.String(64), primary_key=True),
    sa.Column("merchant_id", sa.String(64), nullable=False, index=True),
    sa.Column("expires_at", UTCDateTime, nullable=False),
)


def first_use(db: Database, merchant_id: str, signature: str, timestamp: str) -> bool:
    """Record an accepted signature; ``False`` when it was recorded before (a replay).

    Blocking: run it in a thread.

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
