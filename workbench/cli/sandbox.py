"""``workbench sandbox``: run the local sandbox server in the foreground."""

from __future__ import annotations

import contextlib
import errno
import functools
import gc
import os
import signal
import socket
import sys
import threading
import time
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, ParamSpec

import click

from workbench.config import DEFAULT_API_KEY, DEFAULT_SECRET_KEY, ENV_API_KEY, ENV_SECRET_KEY

if TYPE_CHECKING:
    import asyncio

    from fastapi import FastAPI

    from workbench.sandbox import SandboxConfig
    from workbench.sandbox.edge.httplimits import HttpLimits
    from workbench.sandbox.runtime import SandboxRuntime

__all__ = [
    "PORT_TAKEN_EXIT_STATUS",
    "WORKER_HEALTHCHECK_SECONDS",
    "DatabaseProblem",
    "PortTaken",
    "app_from_environment",
    "check_db_url",
    "config_from_environment",
    "database_problems",
    "listen",
    "open_runtime",
    "prepare_database",
    "protocol_from_environment",
    "sandbox",
    "serve",
    "watch_master",
]

_P = ParamSpec("_P")

# How the command hands its options to worker processes, which uvicorn starts afresh.
ENV_DB = "WORKBENCH_SANDBOX_DB"
ENV_RECONCILER = "WORKBENCH_SANDBOX_RECONCILER"
ENV_WORKERS = "WORKBENCH_SANDBOX_WORKERS"
ENV_MASTER = "WORKBENCH_SANDBOX_MASTER_PID"
ENV_PUBLIC_URL = "WORKBENCH_SANDBOX_PUBLIC_URL"
ENV_HOSTS = "WORKBENCH_SANDBOX_ALLOWED_HOSTS"
ENV_STRICT_REPLAY = "WORKBENCH_SANDBOX_STRICT_REPLAY"
ENV_MAX_HEADER_BYTES = "WORKBENCH_SANDBOX_MAX_HEADER_BYTES"
ENV_HEADER_TIMEOUT = "WORKBENCH_SANDBOX_HEADER_TIMEOUT"
ENV_HTTP = "WORKBENCH_SANDBOX_HTTP"
ENV_BODY_TIMEOUT = "WORKBENCH_SANDBOX_BODY_TIMEOUT"
ENV_MIN_BODY_RATE = "WORKBENCH_SANDBOX_MIN_BODY_RATE"
ENV_MAX_CONNECTIONS = "WORKBENCH_SANDBOX_MAX_CONNECTIONS_PER_ADDRESS"
#: How long a worker may take to answer uvicorn's health check (starting, or busy)
#: before it is killed and replaced: a start under load takes far longer than the default 5 s.
WORKER_HEALTHCHECK_SECONDS = 120
ENV_PRIVATE_WEBHOOKS = "WORKBENCH_SANDBOX_PRIVATE_WEBHOOKS"
ENV_REPLAY_KEY_FILE = "WORKBENCH_SANDBOX_REPLAY_KEY_FILE"
#: The admin token (``--admin-token``), read by the command and its workers alike.
ENV_ADMIN_TOKEN = "WORKBENCH_SANDBOX_ADMIN_TOKEN"
ENV_LISTEN_HOST = "WORKBENCH_SANDBOX_LISTEN_HOST"
#: How many requests each merchant's request log keeps (``--request-log``; 0: off).
ENV_REQUEST_LOG = "WORKBENCH_SANDBOX_REQUEST_LOG"
#: How long a worker whose master died may take to shut down before it is ended hard.
_ORPHAN_GRACE_SECONDS = 10.0


def _config(
    db_url: str | None,
    reconciler: bool,
    workers: int,
    public_url: str | None = None,
    hosts: tuple[str, ...] = (),
    strict_replay: bool = False,
    private_webhooks: bool = False,
    replay_key_file: str | None = None,
    listen_host: str = "127.0.0.1",
    request_log_size: int | None = None,
) -> SandboxConfig:
    from pathlib import Path

    from workbench.sandbox import SandboxConfig
    from workbench.sandbox.config import default_replay_key_file
    from workbench.sandbox.sealing import load_key_file
    from workbench.sandbox.storage import is_memory_url

    config = SandboxConfig(
        api_key=os.environ.get(ENV_API_KEY) or DEFAULT_API_KEY,
        secret_key=os.environ.get(ENV_SECRET_KEY) or DEFAULT_SECRET_KEY,
        run_reconciler_in_background=reconciler,
        workers=workers,
        public_base_url=public_url,
        allowed_hosts=hosts,
        strict_replay=strict_replay,
        webhook_allow_private=private_webhooks,
        owns_process=True,  # the command's processes serve the sandbox and nothing else
        listen_host=listen_host,
        admin_token=os.environ.get(ENV_ADMIN_TOKEN) or None,
    )
    if db_url:
        config.db_url = db_url
    if request_log_size is not None:
        config.request_log_size = request_log_size
    if not is_memory_url(config.db_url):  # an in-memory database ends with its process
        path = Path(replay_key_file) if replay_key_file else default_replay_key_file()
        try:
            config.replay_key = load_key_file(path)
        except (OSError, ValueError) as exc:
            raise click.ClickException(f"replay key: {exc}") from None
    return config


def config_from_environment() -> SandboxConfig:
    """The configuration of one worker process of ``workbench sandbox --workers N``.

    Reads what the command put in the environment: the database URL, whether to run the
    reconciler, how many workers there are, whether replays are refused, whether webhooks
    may go to private ranges, and the demo keys (``WORKBENCH_API_KEY`` /
    ``WORKBENCH_SECRET_KEY``). The HTTP limits reach the workers through uvicorn's own
    configuration.
    """
    return _config(
        os.environ[ENV_DB],
        os.environ.get(ENV_RECONCILER) == "1",
        int(os.environ.get(ENV_WORKERS) or "2"),
        os.environ.get(ENV_PUBLIC_URL) or None,
        tuple(filter(None, os.environ.get(ENV_HOSTS, "").split(","))),
        os.environ.get(ENV_STRICT_REPLAY) == "1",
        os.environ.get(ENV_PRIVATE_WEBHOOKS) == "1",
        os.environ.get(ENV_REPLAY_KEY_FILE) or None,
        os.environ.get(ENV_LISTEN_HOST) or "127.0.0.1",
        int(os.environ[ENV_REQUEST_LOG]) if os.environ.get(ENV_REQUEST_LOG) else None,
    )


def app_from_environment() -> FastAPI:
    """The app of one worker process (a uvicorn factory); see `config_from_environment`.

    The worker also watches the process that started it and shuts itself down when that
    process dies, however it died (``kill -9`` included): an orphaned worker would keep
    serving the port, and a restart would fail with "address already in use".
    """
    gc.disable()  # until the app has started (see `sandbox`)
    from workbench.sandbox import create_app

    master = os.environ.get(ENV_MASTER)
    if master:
        watch_master(int(master))
    return create_app(config_from_environment())


@functools.cache
def _worker_limits() -> HttpLimits:
    from workbench.sandbox.edge.httplimits import HttpLimits

    return HttpLimits(
        max_header_bytes=int(os.environ[ENV_MAX_HEADER_BYTES]),
        header_timeout=float(os.environ[ENV_HEADER_TIMEOUT]),
        implementation=os.environ[ENV_HTTP],
        body_timeout=float(os.environ[ENV_BODY_TIMEOUT]),
        min_body_rate=int(os.environ[ENV_MIN_BODY_RATE]),
        max_connections_per_address=int(os.environ[ENV_MAX_CONNECTIONS]),
    )


def protocol_from_environment(**kwargs: Any) -> asyncio.Protocol:
    """One connection's HTTP protocol in a worker process, with the command's limits.

    uvicorn is given this function's import path rather than the limits object: the
    object would be unpickled, importing the whole sandbox, before a new worker answers
    uvicorn's health check, and a busy machine would see every worker killed as hung.
    """
    protocol: asyncio.Protocol = _worker_limits()(**kwargs)
    return protocol


def watch_master(master_pid: int, interval: float = 0.5) -> threading.Thread:
    """Shut this process down (SIGTERM to itself, then hard) once ``master_pid`` is gone.

    A process whose parent dies is handed to another parent, so ``os.getppid()``
    changing is the sign, on every POSIX system, without polling the master itself.
    """

    def watch() -> None:
        while os.getppid() == master_pid:
            time.sleep(interval)
        os.kill(os.getpid(), signal.SIGTERM)  # uvicorn's graceful shutdown
        time.sleep(_ORPHAN_GRACE_SECONDS)
        os._exit(1)

    thread = threading.Thread(target=watch, name="sandbox-master-watch", daemon=True)
    thread.start()
    return thread


def _collector_off_while_starting(command: Callable[_P, None]) -> Callable[_P, None]:
    """Run ``command`` with the garbage collector off until the app has started.

    Imports and routes make objects by the hundred thousand and almost no garbage, and
    the collector's passes over them took about a seventh of the start. The app's
    startup freezes what it made and turns the collector on (`SandboxConfig.owns_process`);
    should the command return instead, it is turned on then.
    """

    @functools.wraps(command)
    def run(*args: _P.args, **kwargs: _P.kwargs) -> None:
        gc.disable()
        try:
            command(*args, **kwargs)
        finally:
            gc.enable()

    return run


class DatabaseProblem(click.ClickException):
    """A database the command cannot use: one line naming the problem and the fix, exit 2."""

    exit_code = 2


#: The exit status of ``workbench sandbox`` when its port is taken: 2 is a wrong call or
#: database, 3 a server that failed to start (uvicorn's own status).
PORT_TAKEN_EXIT_STATUS = 4
#: What uvicorn exits with when the server did not start.
_STARTUP_FAILURE = 3


class PortTaken(click.ClickException):
    """The port is in use: one line, before anything else is printed, exit 4."""

    exit_code = PORT_TAKEN_EXIT_STATUS


def listen(host: str, port: int) -> socket.socket:
    """Bind the sandbox's socket first, so the banner and every link carry the port bound.

    With ``port`` 0 the system picks a free port; the socket is handed to uvicorn as it
    is (and inherited by the workers), so no other process can take the port in between.

    Raises:
        PortTaken: something already listens on ``host:port``.
        click.ClickException: the address cannot be bound for another reason.
    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn binds
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        shown = f"[{host}]" if ":" in host else host
        if exc.errno == errno.EADDRINUSE:
            raise PortTaken(
                f"port {port} on {shown} is in use: another sandbox probably runs there "
                f"(http://{shown}:{port}/); stop it, or start this one with --port 0 "
                "(any free port) or another --port"
            ) from None
        raise click.ClickException(f"cannot listen on {shown}:{port}: {exc.strerror}") from None
    sock.set_inheritable(True)
    return sock


def serve(app: FastAPI | str, *, sock: socket.socket, **settings: Any) -> None:
    """Serve ``app`` with uvicorn on the bound ``sock``: in this process, or, for an
    import string with ``workers`` above 1, in worker processes sharing the socket.

    Exits with uvicorn's start-failure status (3) when a lone server did not start.
    """
    import uvicorn
    from uvicorn.supervisors import Multiprocess

    config = uvicorn.Config(app, **settings)
    server = uvicorn.Server(config)
    try:
        if config.workers > 1:
            Multiprocess(config, sockets=[sock]).run()
        else:
            server.run(sockets=[sock])
    except KeyboardInterrupt:
        pass
    if config.workers == 1 and not server.started:
        sys.exit(_STARTUP_FAILURE)


def check_db_url(db_url: str) -> None:
    """Refuse a ``--db`` that is not a database URL the sandbox runs on.

    Raises:
        DatabaseProblem: it does not parse, or names a database kind the sandbox lacks.
    """
    from workbench.sandbox.storage.problems import check_url

    problem = check_url(db_url)
    if problem is not None:
        raise DatabaseProblem(problem)


@contextlib.contextmanager
def database_problems(db_url: str) -> Iterator[None]:
    """Turn what goes wrong opening ``db_url`` into a `DatabaseProblem` where it is known.

    A database not created, a server not running, a password refused, a file, folder or
    mount that cannot be written: each is one line naming the fix, never the password.
    """
    import sqlalchemy as sa

    from workbench.sandbox.storage.problems import describe

    try:
        yield
    except (sa.exc.SQLAlchemyError, OSError) as exc:
        problem = describe(db_url, exc)
        if problem is None:
            raise
        raise DatabaseProblem(problem) from None


def prepare_database(
    config: SandboxConfig, then: Callable[[SandboxRuntime], None] | None = None
) -> str | None:
    """Open the configured database once (create or migrate its tables, fixtures) and close
    it; the admin token this made (`SandboxRuntime.new_admin_token`), to show once.
    ``then`` runs with the open runtime before it closes (the dashboard's banner line).

    Raises:
        click.ClickException: the database was written by a schema this version cannot
            serve; the message names the ``--reset`` command.
        DatabaseProblem: the database cannot be opened or written (`database_problems`).
    """
    from workbench.sandbox.runtime import SandboxRuntime
    from workbench.sandbox.storage import is_memory_url

    check_db_url(config.db_url)
    if is_memory_url(config.db_url):
        return None  # a new, empty database every time
    runtime = open_runtime(SandboxRuntime(config))
    try:
        if then is not None:
            then(runtime)
    finally:
        runtime.stop()
    return runtime.new_admin_token


def open_runtime(runtime: SandboxRuntime) -> SandboxRuntime:
    """Open a sandbox's database (create or migrate its tables, fixtures); the runtime.

    Raises:
        click.ClickException: the database was written by a schema this version cannot
            serve; the message names the ``--reset`` command.
    """
    from workbench.sandbox.storage import SchemaVersionError

    try:
        with database_problems(runtime.config.db_url):
            return runtime.open()
    except SchemaVersionError as exc:
        raise click.ClickException(str(exc)) from None


def _reset(db_url: str, yes: bool) -> None:
    """Say what ``--reset`` deletes, ask (unless ``yes``), delete it."""
    from workbench.sandbox.schema import TABLES
    from workbench.sandbox.storage.migrations import describe_reset, reset_database, reset_targets

    click.echo(describe_reset(db_url, TABLES))
    if not reset_targets(db_url, TABLES):
        return
    if not yes:
        click.confirm("Delete it?", abort=True)
    for what in reset_database(db_url, TABLES):
        click.echo(f"deleted {what}")


def _dashboard_banner(runtime: SandboxRuntime) -> None:
    """The dashboard's line: on this machine only, a one-time link that signs the demo
    merchant in (as Jupyter prints its token URL); the token's hash is kept, used once."""
    from workbench.sandbox.dashboard.signin import issue_link

    config = runtime.config
    base = config.public_base_url
    if config.beyond_loopback:
        click.echo(f"dashboard: {base}/dashboard (a merchant's key pair, or the admin token)")
        return
    with runtime.db.write() as conn:
        token = issue_link(conn)
    link = f"{base}/dashboard/sign-in/link?token={token}"
    click.echo(f"dashboard (one-time sign-in link, demo merchant): {link}")


def _admin_banner(config: SandboxConfig, made: str | None) -> None:
    """Say who may make merchants; a token made by this start is shown here, once."""
    if not config.beyond_loopback:
        return
    if made:
        click.echo(f"admin token (shown once): {made}")
        click.echo("  send it as Authorization: Bearer <token> to make or delete merchants")
    elif config.admin_token:
        click.echo("merchants: made, listed and deleted with the admin token given")
    else:
        click.echo(
            "merchants: made, listed and deleted with the admin token shown at this "
            "database's first start beyond loopback (or give one: --admin-token)"
        )


@click.command("sandbox")
@click.option("--host", default="127.0.0.1", show_default=True, help="Interface to listen on.")
@click.option(
    "--port",
    default=8765,
    show_default=True,
    type=int,
    help="Port to listen on (0: a free one, shown in the banner and used in every link).",
)
@click.option(
    "--db",
    "db_url",
    default=None,
    help="SQLAlchemy URL (default: an SQLite file in the user data dir).",
)
@click.option("--no-reconciler", is_flag=True, help="Do not run the background reconciler.")
@click.option(
    "--workers",
    default=1,
    show_default=True,
    type=click.IntRange(1, 64),
    help="Server processes sharing the port and the database (not an in-memory one).",
)
@click.option(
    "--public-url",
    default=None,
    help="Address buyers and clients reach the sandbox at, used in checkoutUrl and "
    "redirects (default: http://HOST:PORT).",
)
@click.option(
    "--allowed-host",
    "allowed_hosts",
    multiple=True,
    help="Another Host name to serve besides loopback and the public URL's (repeatable).",
)
@click.option(
    "--strict-replay",
    is_flag=True,
    help="Refuse a signature already accepted (SVC-GW-1005), across --workers too; "
    "stricter than the spec, to test that your server never replays a request.",
)
@click.option(
    "--max-header-bytes",
    default=None,
    type=click.IntRange(1024, 1024 * 1024),
    help="Largest request line and headers; a larger head is answered 431 and its "
    "connection closed.  [default: 32768]",
)
@click.option(
    "--header-timeout",
    default=None,
    type=click.FloatRange(0),
    help="Seconds a connection may take to send complete headers before it is closed "
    "(0: no limit).  [default: 10]",
)
@click.option(
    "--body-timeout",
    default=None,
    type=click.FloatRange(0),
    help="Seconds a request body may take once its headers are complete before the "
    "connection is closed (0: no limit); a body slower than 1024 bytes a second on "
    "average after 2 s is closed too.  [default: 10]",
)
@click.option(
    "--max-connections-per-address",
    default=None,
    type=click.IntRange(0),
    help="Connections one client address may hold open at once, per worker; one more "
    "is answered 429 and closed (0: no cap).  [default: 256]",
)
@click.option(
    "--keep-alive",
    default=None,
    type=click.IntRange(1),
    help="Seconds an idle kept-alive connection stays open.  [default: 5]",
)
@click.option(
    "--reset",
    is_flag=True,
    help="Delete the database's sandbox data first (says what, and asks unless --yes); "
    "for a database written by a newer or unreadable schema.",
)
@click.option("--yes", is_flag=True, help="With --reset: do not ask.")
@click.option(
    "--allow-private-webhooks",
    is_flag=True,
    help="Also send webhooks to private-range addresses (10/8, 172.16/12, 192.168/16, "
    "fc00::/7); loopback is always allowed, link-local and 0.0.0.0 never.",
)
@click.option(
    "--replay-key-file",
    default=None,
    type=click.Path(dir_okay=False),
    help="File holding the key that seals stored answers carrying a portal link "
    "(created if missing; give every sandbox sharing a database the same file).  "
    "[default: replay.key in the user configuration directory]",
)
@click.option(
    "--admin-token",
    envvar=ENV_ADMIN_TOKEN,
    default=None,
    help="The token making, listing and deleting merchants needs on a sandbox reachable "
    "beyond loopback (Authorization: Bearer). Without it, one is made at the first such "
    "start, printed once, and kept in the database as a hash.  [env: "
    f"{ENV_ADMIN_TOKEN}]",
)
@click.option(
    "--http",
    "http_implementation",
    default="auto",
    show_default=True,
    type=click.Choice(["auto", "httptools", "h11"]),
    help="uvicorn's HTTP parser (auto: httptools when installed); the limits hold on both.",
)
@click.option(
    "--request-log",
    "request_log",
    default=None,
    type=click.IntRange(0),
    help="API requests each merchant's request log keeps, the newest (the dashboard's "
    "Requests page; 0: no log).  [default: 1000]",
)
@_collector_off_while_starting
def sandbox(
    host: str,
    port: int,
    db_url: str | None,
    no_reconciler: bool,
    workers: int,
    public_url: str | None,
    allowed_hosts: tuple[str, ...],
    strict_replay: bool,
    max_header_bytes: int | None,
    header_timeout: float | None,
    body_timeout: float | None,
    max_connections_per_address: int | None,
    keep_alive: int | None,
    reset: bool,
    yes: bool,
    allow_private_webhooks: bool,
    replay_key_file: str | None,
    admin_token: str | None,
    http_implementation: str,
    request_log: int | None,
) -> None:
    """Run the local sandbox; WORKBENCH_API_KEY / WORKBENCH_SECRET_KEY set the demo keys.

    Public addresses (checkoutUrl, redirects) come from --public-url, never from a
    request's Host or X-Forwarded-* headers; a request naming a Host this sandbox does not
    serve is refused.
    A database written by an older version is migrated; one it cannot serve is refused
    with a message, and --reset starts it afresh.
    """
    from workbench.sandbox import create_app
    from workbench.sandbox.server import http_settings
    from workbench.sandbox.storage import is_memory_url
    from workbench.sandbox.storage.problems import safe_url
    from workbench.sandbox.storage.writelock import CROSS_PROCESS

    if db_url:
        check_db_url(db_url)
    if workers > 1 and not CROSS_PROCESS:
        raise click.UsageError(
            "--workers above 1 runs on Linux and macOS only: the processes share the "
            "database through POSIX file locks (fcntl) and named pipes, which this system "
            "lacks. Run one worker (the default), which serves everything the same way."
        )
    if workers > 1 and db_url and is_memory_url(db_url):
        raise click.UsageError(
            "--workers above 1 needs a database the processes can share: an SQLite file "
            "or PostgreSQL (postgresql+psycopg://...), not an in-memory one"
        )
    # Bound before anything is printed: a taken port is the one line shown, and the banner
    # and every link (checkoutUrl, acsUrl) carry the port bound (the system's for --port 0).
    listener = listen(host, port)
    click.get_current_context().call_on_close(listener.close)
    port = listener.getsockname()[1]
    if public_url is None:
        wildcard = host in ("0.0.0.0", "::", "")  # noqa: S104 - comparing, not binding
        name = socket.gethostname() if wildcard else host
        public_url = f"http://{f'[{name}]' if ':' in name else name}:{port}"
    config = _config(
        db_url,
        not no_reconciler,
        workers,
        public_url.rstrip("/"),
        allowed_hosts,
        strict_replay,
        allow_private_webhooks,
        replay_key_file,
        host,
        request_log,
    )
    if admin_token:
        config.admin_token = admin_token
    if max_header_bytes is not None:
        config.max_header_bytes = max_header_bytes
    if header_timeout is not None:
        config.header_timeout_seconds = header_timeout
    if body_timeout is not None:
        config.body_timeout_seconds = body_timeout
    if max_connections_per_address is not None:
        config.max_connections_per_address = max_connections_per_address
    if keep_alive is not None:
        config.keep_alive_seconds = keep_alive
    config.http_implementation = http_implementation
    base = config.public_base_url
    click.echo(f"Payments Workbench sandbox at {base}/  (start page: keys, links, test cards)")
    click.echo(f"API reference (Swagger UI, no network needed): {base}/docs")
    click.echo(f"database: {safe_url(config.db_url)}")
    click.echo(f"demo merchant mrc_demo0001 / store sto_demo0001: {config.describe_credentials()}")
    if strict_replay:
        click.echo("strict replay: a signature is accepted once (SVC-GW-1005 for a replay)")
    if reset:
        with database_problems(config.db_url):
            _reset(config.db_url, yes)
    limits = http_settings(config)
    # Tables, migrations and fixtures once, here: the workers do not race to make them,
    # and a database this version cannot serve is refused before anything listens.
    if workers == 1:
        app = create_app(config)
        runtime = open_runtime(app.state.sandbox)  # the app's own: its startup finds it open
        _admin_banner(config, runtime.new_admin_token)
        _dashboard_banner(runtime)
        serve(app, sock=listener, host=host, port=port, log_level="info", **limits)
        return
    _admin_banner(config, prepare_database(config, _dashboard_banner))
    gc.enable()  # this process only watches the workers: no app starts in it
    os.environ[ENV_DB] = config.db_url
    os.environ[ENV_RECONCILER] = "1" if config.run_reconciler_in_background else "0"
    os.environ[ENV_WORKERS] = str(workers)
    os.environ[ENV_MASTER] = str(os.getpid())
    os.environ[ENV_PUBLIC_URL] = public_url
    os.environ[ENV_HOSTS] = ",".join(allowed_hosts)
    os.environ[ENV_STRICT_REPLAY] = "1" if strict_replay else "0"
    os.environ[ENV_PRIVATE_WEBHOOKS] = "1" if allow_private_webhooks else "0"
    os.environ[ENV_REPLAY_KEY_FILE] = replay_key_file or ""
    os.environ[ENV_LISTEN_HOST] = host
    os.environ[ENV_REQUEST_LOG] = str(config.request_log_size)
    if admin_token:
        os.environ[ENV_ADMIN_TOKEN] = admin_token
    os.environ[ENV_MAX_HEADER_BYTES] = str(config.max_header_bytes)
    os.environ[ENV_HEADER_TIMEOUT] = str(config.header_timeout_seconds)
    os.environ[ENV_HTTP] = config.http_implementation
    os.environ[ENV_BODY_TIMEOUT] = str(config.body_timeout_seconds)
    os.environ[ENV_MIN_BODY_RATE] = str(config.min_body_rate)
    os.environ[ENV_MAX_CONNECTIONS] = str(config.max_connections_per_address)
    limits["http"] = "workbench.cli.sandbox:protocol_from_environment"
    click.echo(f"{workers} workers; one reconciler pass at a time across them (a lease)")
    serve(
        "workbench.cli.sandbox:app_from_environment",
        sock=listener,
        factory=True,
        workers=workers,
        host=host,
        port=port,
        log_level="info",
        timeout_graceful_shutdown=5,
        # uvicorn kills a worker that has not answered its health check within this many
        # seconds, one still starting included: its 5 s default killed workers starting on
        # a loaded 2-core machine, over and over (two workers took 49 s and five restarts).
        timeout_worker_healthcheck=WORKER_HEALTHCHECK_SECONDS,
        **limits,
    )
