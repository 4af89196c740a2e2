"""`SandboxRuntime`: one running sandbox, assembled (database, caches, background work).

It holds the configuration, database, key cache, rate limiter, and the reconciler with
its work.

With `workbench.sandbox.app` this is the composition root: the background work is built
here with what it needs and registered in one list (`_background_work`). Only the app,
the server and the command line import this module; the routes reach the
`SandboxRuntime` through `workbench.sandbox.routing.sandbox_of`, typed by the parts they
use.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

from sqlalchemy.engine import make_url

from workbench.sandbox.accepted_signatures import ReplayPurgeWork
from workbench.sandbox.admin import AdminAccess, ensure_admin_token
from workbench.sandbox.clock import wall_now
from workbench.sandbox.config import SandboxConfig, default_db_url
from workbench.sandbox.control.service import consume_fail_next
from workbench.sandbox.edge.keycache import KeyCache
from workbench.sandbox.edge.ratelimit import RateLimiter
from workbench.sandbox.edge.ratelimit_address import address_limiter
from workbench.sandbox.edge.ratelimit_shared import SharedRateLimiter
from workbench.sandbox.events import WebhookWork
from workbench.sandbox.fixtures import DEMO_MERCHANT_ID, ensure_fixtures
from workbench.sandbox.idempotency import IdempotencyPurgeWork
from workbench.sandbox.keys import KEY_TABLES, KeyRecord
from workbench.sandbox.merchant_secrets import seal_plain_secrets
from workbench.sandbox.payments.acs import ensure_acs_secret
from workbench.sandbox.payments.expiry import AuthorizationExpiryWork
from workbench.sandbox.payments.threeds import ThreeDSExpiryWork
from workbench.sandbox.reconciler import DueWork, Reconciler
from workbench.sandbox.refunds.service import RefundSettlementWork
from workbench.sandbox.requestlog import RequestLogWork, RequestQueue
from workbench.sandbox.schema import TABLES
from workbench.sandbox.sealing import Sealer, process_key
from workbench.sandbox.sessions.service import SessionExpiryWork
from workbench.sandbox.storage import Database, is_memory_url
from workbench.sandbox.storage.migrations import open_schema
from workbench.sandbox.subscriptions import RenewalWork

__all__ = ["SandboxRuntime"]

_NOT_OPEN = "the sandbox is not open yet: call open() or start() (the app does on startup)"


def _sqlite_folder(url: str) -> Path | None:
    """The folder of an SQLite database file, ``None`` for anything else."""
    parsed = make_url(url)
    if parsed.get_backend_name() != "sqlite" or is_memory_url(url) or not parsed.database:
        return None
    return Path(parsed.database).parent


def _webhook_work(db: Database, config: SandboxConfig, sealer: Sealer) -> WebhookWork:
    return WebhookWork(
        db,
        config.webhook_timeout_seconds,
        config.webhook_concurrency,
        config.webhook_max_attempts,
        connections_per_target=config.webhook_connections_per_target,
        allow_private=config.webhook_allow_private,
        detailed_errors=not config.serves_others,
        sealer=sealer,
    )


def _background_work(db: Database, config: SandboxConfig, webhooks: WebhookWork) -> list[DueWork]:
    """The reconciler's work, in the order it runs at one moment of a merchant's clock."""
    work: list[DueWork] = [
        RefundSettlementWork(db),
        SessionExpiryWork(db),
        ThreeDSExpiryWork(db, config.threeds_timeout_seconds),
        AuthorizationExpiryWork(db),
        RenewalWork(db),
        webhooks,
        IdempotencyPurgeWork(db),
    ]
    if config.strict_replay:
        work.append(ReplayPurgeWork(db))
    return work


class SandboxRuntime:
    """Everything one sandbox instance holds; the app factory builds one per app.

    Building it touches nothing: `open` (called by `start`, so by the app's startup)
    opens the database, creates or migrates its tables and the built-in fixtures, so a
    restarted sandbox on the same database finds its data where it left it.

    Args:
        config: how to run.
    """

    def __init__(self, config: SandboxConfig) -> None:
        self.config = config
        #: Every table of the sandbox, in creation order (`workbench.sandbox.schema`).
        self.tables = TABLES
        self._db: Database | None = None
        self._keys: KeyCache[KeyRecord] | None = None
        self._limiter: RateLimiter | SharedRateLimiter | None = None
        self._address_limiter: RateLimiter | None = None
        self._reconciler: Reconciler | None = None
        self._webhooks: WebhookWork | None = None
        self._acs_secret: str | None = None
        #: Seals idempotency answers that carry a bearer, and the merchants' secrets,
        #: under a key the database does not hold: the configured one, else one made for
        #: this process's life.
        self.sealer = Sealer(config.replay_key or process_key())
        self._admin: AdminAccess | None = None
        #: The admin token made by this start (the database had none), for the command
        #: that started the sandbox to show once; ``None`` otherwise.
        self.new_admin_token: str | None = None
        #: Where the edge leaves each exchange for the request log (``None``: the log is
        #: off, ``request_log_size`` 0); its writer is built when the database opens.
        self.request_queue: RequestQueue | None = (
            RequestQueue() if config.request_log_size > 0 else None
        )
        self._request_log: RequestLogWork | None = None
        #: Told each merchant whose request log grew, after its rows are committed
        #: (the dashboard's live list; set by the app before it starts).
        self.on_request_logged: Callable[[str], None] | None = None

    def open(self) -> SandboxRuntime:
        """Open the database (once): tables created or migrated, fixtures, caches, work.

        An SQLite file's folder is created if missing.

        Returns:
            This sandbox.

        Raises:
            SchemaVersionError: the database was written by a schema this version
                cannot migrate (``workbench sandbox --reset`` starts it afresh).
        """
        if self._db is not None:
            return self
        config = self.config
        folder = _sqlite_folder(config.db_url)
        if folder is not None:
            folder.mkdir(parents=True, exist_ok=True)
        db = Database(config.db_url, workers=config.workers)
        try:
            open_schema(db, TABLES, default_url=default_db_url())
            with db.write() as conn:
                seal_plain_secrets(conn, self.sealer)
                ensure_fixtures(
                    conn,
                    api_key=config.api_key,
                    secret_key=config.secret_key,
                    now=wall_now(),
                    sealer=self.sealer,
                )
                self._acs_secret = ensure_acs_secret(conn)
                digest, self.new_admin_token = ensure_admin_token(
                    conn, create=config.beyond_loopback and not config.admin_token
                )
        except BaseException:
            db.dispose()
            raise
        self._db = db
        given = config.admin_token
        self._admin = AdminAccess(
            required=config.beyond_loopback,
            digest=hashlib.sha256(given.encode("utf-8")).hexdigest() if given else digest,
        )
        self._keys = KeyCache(
            enabled=True, stamp_path=db.sidecar("keys.stamp"), confirm=not db.is_local
        )
        self._keys.watch(db.engine, KEY_TABLES)
        rate, burst = config.rate_limit_per_second, config.rate_limit_burst
        # Several processes on one database count one limit together, in the database.
        self._limiter = (
            RateLimiter(rate, burst)
            if db.is_local and config.workers == 1
            else SharedRateLimiter(db, rate, burst)
        )
        self._address_limiter = address_limiter(
            db,
            config.public_rate_limit_per_second,
            config.public_rate_limit_burst,
            shared=not (db.is_local and config.workers == 1),
        )
        self._reconciler = Reconciler(
            db, config.reconciler_interval_seconds, config.webhook_wait_seconds
        )
        self._webhooks = _webhook_work(db, config, self.sealer)
        if self.request_queue is not None:
            self._request_log = RequestLogWork(
                db,
                self.request_queue,
                keep=config.request_log_size,
                sealer=self.sealer,
                on_written=self._request_logged,
            )
        for work in _background_work(db, config, self._webhooks):
            self._reconciler.register(work)
        return self

    @property
    def is_open(self) -> bool:
        """Whether `open` has run (and the database is in use)."""
        return self._db is not None

    @property
    def db(self) -> Database:
        """The database (once open)."""
        if self._db is None:
            raise RuntimeError(_NOT_OPEN)
        return self._db

    @property
    def keys(self) -> KeyCache[KeyRecord]:
        """API key records kept between requests (once open)."""
        if self._keys is None:
            raise RuntimeError(_NOT_OPEN)
        return self._keys

    def _request_logged(self, merchant_ids: set[str]) -> None:
        hook = self.on_request_logged
        if hook is not None:
            for merchant_id in merchant_ids:
                hook(merchant_id)

    @property
    def request_log(self) -> RequestLogWork | None:
        """The request log's writer (once open; ``None`` when the log is off)."""
        if self._db is None:
            raise RuntimeError(_NOT_OPEN)
        return self._request_log

    @property
    def admin(self) -> AdminAccess:
        """Who may make, list and delete merchants (once open)."""
        if self._admin is None:
            raise RuntimeError(_NOT_OPEN)
        return self._admin

    @property
    def address_limiter(self) -> RateLimiter:
        """The per-client-address limiter of the unsigned routes (once open)."""
        if self._address_limiter is None:
            raise RuntimeError(_NOT_OPEN)
        return self._address_limiter

    @property
    def limiter(self) -> RateLimiter | SharedRateLimiter:
        """The per-key rate limiter (once open)."""
        if self._limiter is None:
            raise RuntimeError(_NOT_OPEN)
        return self._limiter

    @property
    def reconciler(self) -> Reconciler:
        """The background work's runner (once open)."""
        if self._reconciler is None:
            raise RuntimeError(_NOT_OPEN)
        return self._reconciler

    @property
    def webhooks(self) -> WebhookWork:
        """Webhook delivery (once open): the dashboard's resend sends through it."""
        if self._webhooks is None:
            raise RuntimeError(_NOT_OPEN)
        return self._webhooks

    def consume_fail_next(self, merchant_id: str, mode: str) -> str | None:
        """Take the merchant's pending fail-next switch, once (the control feature's
        `workbench.sandbox.control.service.consume_fail_next`); blocking."""
        return consume_fail_next(self.db, merchant_id, mode)

    @property
    def acs_secret(self) -> str:
        """The key the simulated ACS signs its assertions with (once open)."""
        if self._acs_secret is None:
            raise RuntimeError(_NOT_OPEN)
        return self._acs_secret

    def start(self) -> None:
        """Open (if not yet), then start background work (WAL checkpoints; the reconciler)."""
        self.open()
        self.db.start_checkpoints()
        if self._request_log is not None:
            self._request_log.start()
        if self.config.run_reconciler_in_background:
            self.reconciler.start()

    def stop(self) -> None:
        """Stop background work and release connections (nothing to do if never opened)."""
        if self._db is None:
            return
        self.reconciler.stop()
        if self._request_log is not None:
            self._request_log.stop()  # what is queued is written first
        if self._webhooks is not None:
            self._webhooks.close()  # after the passes that start attempts have ended
        if not self._db.is_memory:
            self._db.dispose()

    def advance_clock(self, seconds: float, merchant_id: str = DEMO_MERCHANT_ID) -> datetime:
        """Advance a merchant's business clock, running the work that falls due, in order."""
        return self.reconciler.advance(merchant_id, seconds)

    def tick(self, merchant_id: str | None = None) -> dict[str, int]:
        """One reconciler pass now (one merchant or all)."""
        return self.reconciler.tick(merchant_id)
