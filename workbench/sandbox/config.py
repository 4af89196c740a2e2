"""The sandbox's configuration: passed in, never read from the environment here."""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

import platformdirs

from workbench.config import DEFAULT_API_KEY, DEFAULT_SECRET_KEY, mask_key, mask_secret

__all__ = ["SandboxConfig", "default_db_url", "default_replay_key_file"]

_LOOPBACK_NAMES = frozenset({"127.0.0.1", "localhost", "::1"})


def _is_loopback(host: str) -> bool:
    if host.lower() in _LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def default_db_url() -> str:
    """An SQLite file under the user's data directory (the sandbox creates both on startup)."""
    directory = Path(platformdirs.user_data_dir("payments-workbench", appauthor=False))
    return f"sqlite:///{directory / 'sandbox.db'}"


def default_replay_key_file() -> Path:
    """Where ``workbench sandbox`` keeps its replay key: the user's configuration
    directory, apart from the database (which lives in the data directory or a server)."""
    return Path(platformdirs.user_config_dir("payments-workbench", appauthor=False)) / "replay.key"


@dataclass(slots=True)
class SandboxConfig:
    """How one sandbox instance runs.

    Attributes:
        db_url: SQLAlchemy URL. ``sqlite://`` or ``sqlite:///:memory:`` is one in-memory
            database shared by every thread; ``postgresql+psycopg://...`` for a shared sandbox.
        api_key: the demo merchant's public key.
        secret_key: the demo merchant's secret key (kept out of ``repr``).
        public_base_url: the address clients reach the sandbox at (default: the address
            the server is bound to), used for ``checkoutUrl``, the ACS page and redirects;
            never taken from a request's ``Host`` header.
        allowed_hosts: host names served besides loopback and ``public_base_url``'s
            (``"*"``: any); a request naming another ``Host`` is refused.
        checkout_base_url: where hosted checkout pages live (default: ``public_base_url``);
            a session's ``checkoutUrl`` is ``<checkout_base_url>/checkout/<sessionId>``.
        rate_limit_per_second: sustained requests per second per API key (0 turns it off).
        rate_limit_burst: requests a key may send at once before the limit bites.
        public_rate_limit_per_second: sustained requests per second per client address
            on the routes that take no signature (public status, portal, hosted pages;
            0 turns it off).
        public_rate_limit_burst: requests an address may send to them at once.
        latency_ms: simulated latency added to every signed response (all merchants).
        workers: how many processes serve this database (``workbench sandbox --workers``);
            above 1, rate limits are counted in the database, where all of them see it.
        run_reconciler_in_background: run the reconciler on a thread while serving.
        reconciler_interval_seconds: pause between background reconciler passes.
        refund_settle_seconds: business time an in-flight refund takes to settle.
        threeds_timeout_seconds: business time after which an unfinished challenge fails.
        webhook_timeout_seconds: the total deadline of one webhook delivery attempt
            (connect, send, wait for and read the answer).
        webhook_wait_seconds: how long a reconciler pass, or a clock advance in all,
            waits for webhook answers; attempts still open then carry on after it.
        webhook_concurrency: webhook attempts in flight at once for one merchant's pass.
        webhook_connections_per_target: connections one sandbox process holds open at once
            to one target (scheme, address, port), whichever merchants' events they carry.
        webhook_max_attempts: delivery attempts before an event is marked failed.
        webhook_allow_private: send webhooks to private-range addresses (10/8,
            192.168/16, fc00::/7 ...) too; loopback is always allowed, link-local and
            unspecified addresses never (`workbench.sandbox.targets`).
        max_header_bytes: the largest request head (request target and header lines)
            served; a larger one is answered 431 (SVC-GW-4031) and its connection closed.
        header_timeout_seconds: how long a connection may take to send a complete request
            head before it is closed (slow-header clients); 0 turns the deadline off.
        body_timeout_seconds: how long a request body may take once its head is complete
            before the connection is closed (slow-body clients); 0 turns it off.
        min_body_rate: bytes a second a body must average once it has taken 2 s, else
            its connection is closed; 0 turns the minimum off.
        max_connections_per_address: connections one client address may hold open at
            once (per process); one more is answered 429 and closed. 0: no cap.
        keep_alive_seconds: how long an idle kept-alive connection stays open.
        http_implementation: uvicorn's HTTP parser: ``"auto"`` (httptools when
            installed), ``"httptools"`` or ``"h11"``; the limits above hold on both.
        strict_replay: refuse a signature the sandbox has already accepted (SVC-GW-1005),
            a stricter rule than the spec's, to test that a client never replays.
        owns_process: the sandbox is all its process runs (``workbench sandbox``): once
            started, what startup allocated is moved out of the garbage collector's way
            (`gc.freeze`), so a full collection no longer walks it (about 70 ms each,
            several a second under load), the youngest objects are collected less
            often (`YOUNG_COLLECTION_THRESHOLD`), and the collector, which the command
            turns off while the sandbox starts, is turned on. Off for a sandbox inside another
            program (a notebook, a test), whose objects it would keep from ever being
            collected.
        replay_key: 32 bytes sealing the idempotency answers that carry a bearer (a
            subscription's ``publicHash``), kept out of the database and of ``repr``;
            ``None``: a key made for this sandbox's life (``workbench sandbox`` reads
            one from a file, `default_replay_key_file`, so restarts and workers share it).
            It also seals every merchant's secret key and webhook secret in the database.
        listen_host: the interface the server listens on (``workbench sandbox --host``).
            Beyond loopback (`beyond_loopback`), creating, listing or deleting merchants
            and resetting a built-in one need the admin token.
        admin_token: the admin token given (``--admin-token``), kept out of ``repr``;
            ``None``: the one the database keeps (made at the first start beyond loopback).
        request_log_size: how many API requests each merchant's request log keeps (the
            newest; the dashboard's Requests page); 0 turns the log off.
    """

    db_url: str = field(default_factory=default_db_url)
    api_key: str = DEFAULT_API_KEY
    secret_key: str = field(default=DEFAULT_SECRET_KEY, repr=False)
    public_base_url: str | None = None
    checkout_base_url: str | None = None
    allowed_hosts: tuple[str, ...] = ()
    rate_limit_per_second: float = 200.0
    rate_limit_burst: int = 400
    public_rate_limit_per_second: float = 20.0
    public_rate_limit_burst: int = 100
    latency_ms: int = 0
    workers: int = 1
    run_reconciler_in_background: bool = True
    reconciler_interval_seconds: float = 0.5
    refund_settle_seconds: int = 60
    threeds_timeout_seconds: int = 15 * 60
    webhook_timeout_seconds: float = 5.0
    webhook_wait_seconds: float = 10.0
    webhook_concurrency: int = 8
    webhook_connections_per_target: int = 8
    webhook_max_attempts: int = 5
    webhook_allow_private: bool = False
    max_header_bytes: int = 32 * 1024
    header_timeout_seconds: float = 10.0
    body_timeout_seconds: float = 10.0
    min_body_rate: int = 1024
    max_connections_per_address: int = 256
    keep_alive_seconds: int = 5
    http_implementation: str = "auto"
    strict_replay: bool = False
    owns_process: bool = False
    replay_key: bytes | None = field(default=None, repr=False)
    listen_host: str = "127.0.0.1"
    admin_token: str | None = field(default=None, repr=False)
    request_log_size: int = 1_000

    @property
    def serves_others(self) -> bool:
        """Whether others may reach this sandbox (a team host): its public URL, or a host
        name it serves, is not this machine's loopback."""
        names = [urlsplit(self.public_base_url).hostname or ""] if self.public_base_url else []
        names += [name.lower() for name in self.allowed_hosts]
        return any(name not in _LOOPBACK_NAMES for name in names)

    @property
    def beyond_loopback(self) -> bool:
        """Whether anyone but this machine may reach the sandbox: it listens on an
        interface other than loopback, or serves a public URL or host name that is not."""
        return self.serves_others or not _is_loopback(self.listen_host)

    @property
    def uses_default_keys(self) -> bool:
        """Whether the demo merchant runs on the built-in (public) demo key pair."""
        return self.api_key == DEFAULT_API_KEY and self.secret_key == DEFAULT_SECRET_KEY

    def describe_credentials(self) -> str:
        """The demo credentials for a banner: the secret only when it is the public default."""
        secret = self.secret_key if self.uses_default_keys else mask_secret(self.secret_key)
        key = self.api_key if self.uses_default_keys else mask_key(self.api_key)
        return f"api key {key}, secret key {secret}"

    def __repr__(self) -> str:
        return (
            f"SandboxConfig(db_url={self.db_url!r}, api_key={mask_key(self.api_key)!r}, "
            f"secret_key={mask_secret(self.secret_key)!r})"
        )
