"""`Sandbox`: one running sandbox's state: configuration, database, reconciler, limiter."""

from __future__ import annotations

from datetime import datetime

import sqlalchemy as sa

from workbench.sandbox import db as tables
from workbench.sandbox.acs import ensure_acs_secret
from workbench.sandbox.clock import wall_now
from workbench.sandbox.config import SandboxConfig
from workbench.sandbox.db import Database
from workbench.sandbox.events import WebhookWork
from workbench.sandbox.fixtures import DEMO_MERCHANT_ID, ensure_fixtures
from workbench.sandbox.idempotency import IdempotencyPurgeWork
from workbench.sandbox.keycache import KeyCache
from workbench.sandbox.payments import ThreeDSExpiryWork
from workbench.sandbox.ratelimit import RateLimiter
from workbench.sandbox.ratelimit_shared import SharedRateLimiter
from workbench.sandbox.reconciler import Reconciler
from workbench.sandbox.refunds import RefundSettlementWork
from workbench.sandbox.replay import ReplayPurgeWork
from workbench.sandbox.sessions import SessionExpiryWork
from workbench.sandbox.subscriptions import RenewalWork

__all__ = ["Sandbox"]


class Sandbox:
    """Everything one sandbox instance holds; the app factory builds one per app.

    Creating it creates the tables that are missing and the built-in fixtures, so a
    restarted sandbox on the same database finds its data where it left it.

    Args:
        config: how to run.
    """

    def __init__(self, config: SandboxConfig) -> None:
        self.config = config
        self.db = Database(config.db_url, workers=config.workers)
        self.db.create_all()
        with self.db.write() as conn:
            ensure_fixtures(
                conn, api_key=config.api_key, secret_key=config.secret_key, now=wall_now()
            )
            self.acs_secret = ensure_acs_secret(conn)
        self.keys = KeyCache(
            enabled=True, stamp_path=self.db.sidecar("keys.stamp"), confirm=not self.db.is_sqlite
        )
        rate, burst = config.rate_limit_per_second, config.rate_limit_burst
        # Several processes on one database count one limit together, in the database.
        self.limiter = (
            RateLimiter(rate, burst)
            if self.db.is_sqlite and config.workers == 1
            else SharedRateLimiter(self.db, rate, burst)
        )
        self.reconciler = Reconciler(self)
        self.reconciler.register(RefundSettlementWork())
        self.reconciler.register(SessionExpiryWork())
        self.reconciler.register(ThreeDSExpiryWork(config.threeds_timeout_seconds))
        self.reconciler.register(RenewalWork())
        self.reconciler.register(
            WebhookWork(
                config.webhook_timeout_seconds,
                config.webhook_concurrency,
                config.webhook_max_attempts,
            )
        )
        self.reconciler.register(IdempotencyPurgeWork())
        if config.strict_replay:
            self.reconciler.register(ReplayPurgeWork())

    def start(self) -> None:
        """Start background work (WAL checkpoints; the reconciler thread, if configured)."""
        self.db.start_checkpoints()
        if self.config.run_reconciler_in_background:
            self.reconciler.start()

    def stop(self) -> None:
        """Stop background work and release connections."""
        self.reconciler.stop()
        if not self.db.is_memory:
            self.db.dispose()

    def advance_clock(self, seconds: float, merchant_id: str = DEMO_MERCHANT_ID) -> datetime:
        """Advance a merchant's business clock, running the work that falls due, in order."""
        return self.reconciler.advance(merchant_id, seconds)

    def tick(self, merchant_id: str | None = None) -> dict[str, int]:
        """One reconciler pass now (one merchant or all)."""
        return self.reconciler.tick(merchant_id)

    def consume_fail_next(self, merchant_id: str, mode: str) -> str | None:
        """Take the merchant's pending fail-next switch, once; ``None`` if another took it."""
        m = tables.merchants
        with self.db.write() as conn:
            done = conn.execute(
                sa.update(m)
                .where(m.c.id == merchant_id, m.c.fail_next == mode)
                .values(fail_next=None)
            )
        self.keys.clear()
        return mode if done.rowcount == 1 else None
