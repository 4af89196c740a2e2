"""Servers the benchmarks measure, each in a process of its own on a free loopback port."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import os
import secrets
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx2

if TYPE_CHECKING:
    from fastapi import FastAPI

    from workbench.sandbox import SandboxConfig

HERE = Path(__file__).resolve().parent


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def wait_ready(url: str, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            httpx2.get(url, timeout=1.0)
            return
        except httpx2.TransportError:
            time.sleep(0.1)
    raise RuntimeError(f"{url} did not answer within {timeout} s")


@contextlib.contextmanager
def process(
    command: list[str], ready_url: str, *, ready_seconds: float = 60.0, **kwargs: object
) -> Iterator[subprocess.Popen[bytes]]:
    proc = subprocess.Popen(
        command,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        **kwargs,  # type: ignore[call-overload]
    )
    try:
        wait_ready(ready_url, ready_seconds)
        yield proc
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()


#: The local PostgreSQL server the benchmark makes its own database on (trust auth).
PG_ADMIN_URL = os.environ.get(
    "WORKBENCH_BENCH_PG_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/postgres"
)


@contextlib.contextmanager
def postgres_database() -> Iterator[str]:
    """A database of the benchmark's own on the local PostgreSQL, dropped afterwards.

    Raises:
        RuntimeError: PostgreSQL does not answer on 127.0.0.1 (the message says why).
    """
    import uuid

    import sqlalchemy as sa

    host = sa.engine.make_url(PG_ADMIN_URL).host
    if host not in ("127.0.0.1", "localhost", "::1"):
        raise RuntimeError(f"the benchmark only uses a local PostgreSQL, not {host!r}")
    admin = sa.create_engine(
        PG_ADMIN_URL, isolation_level="AUTOCOMMIT", connect_args={"connect_timeout": 3}
    )
    name = f"wb_bench_{uuid.uuid4().hex[:12]}"
    try:
        with admin.connect() as conn:
            conn.exec_driver_sql(f'CREATE DATABASE "{name}"')
    except sa.exc.SQLAlchemyError as exc:
        admin.dispose()
        reason = str(exc.orig if exc.orig is not None else exc).splitlines()[0]
        raise RuntimeError(f"PostgreSQL not reachable at {PG_ADMIN_URL}: {reason}") from exc
    try:
        yield PG_ADMIN_URL.rsplit("/", 1)[0] + f"/{name}"
    finally:
        with admin.connect() as conn:
            conn.exec_driver_sql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        admin.dispose()


def bench_config() -> SandboxConfig:
    """The measured sandbox: rate limits off, and the background reconciler unless
    ``BENCH_SANDBOX_RECONCILER=1``, from the environment; the request log keeps
    ``BENCH_SANDBOX_REQUEST_LOG`` requests per merchant (0: off; default: the sandbox's)."""
    from workbench.sandbox import SandboxConfig

    return SandboxConfig(
        db_url=os.environ["BENCH_SANDBOX_DB"],
        rate_limit_per_second=0,
        public_rate_limit_per_second=0,
        run_reconciler_in_background=os.environ.get("BENCH_SANDBOX_RECONCILER") == "1",
        workers=int(os.environ.get("BENCH_SANDBOX_WORKERS", "1")),
        owns_process=True,  # as `workbench sandbox` runs it
        # One key for the parent and every worker, as the command's key file is: secrets
        # are sealed under it, and a worker with a key of its own refuses every signature.
        replay_key=bytes.fromhex(os.environ["BENCH_SANDBOX_REPLAY_KEY"]),
        request_log_size=int(os.environ.get("BENCH_SANDBOX_REQUEST_LOG", "1000")),
    )


def sandbox_app() -> FastAPI:
    """A uvicorn factory, so that several worker processes can each build the app."""
    from workbench.sandbox import create_app

    return create_app(bench_config())


@functools.cache
def _http_settings() -> dict[str, Any]:
    from workbench.sandbox.server import http_settings

    return http_settings(bench_config())


def bench_protocol(**kwargs: Any) -> asyncio.Protocol:
    """One connection's protocol in a worker process, with the limits the sandbox serves with."""
    protocol: asyncio.Protocol = _http_settings()["http"](**kwargs)
    return protocol


# As `workbench sandbox --workers N` does: tables and fixtures once, then the workers, with
# the command's HTTP settings (header cap and deadline, no forwarding headers); only the
# access log is off, as the command's output is not what is measured.
SANDBOX_MAIN = """
import sys, uvicorn
from benchmarks._servers import _http_settings, bench_config
from workbench.sandbox.runtime import SandboxRuntime
SandboxRuntime(bench_config()).open().stop()
workers = int(sys.argv[2])
settings = dict(_http_settings())
if workers > 1:
    settings["http"] = "benchmarks._servers:bench_protocol"
uvicorn.run("benchmarks._servers:sandbox_app", factory=True, host="127.0.0.1",
            port=int(sys.argv[1]), workers=workers, log_level="warning",
            access_log=False, **settings)
"""

STARLETTE_MAIN = """
import sys, uvicorn
from starlette.applications import Starlette
from starlette.responses import JSONResponse
from starlette.routing import Route
BODY = {"paymentId": "pay_0", "status": "captured", "amount": 15000, "currency": "TRY"}
async def charge(request):
    await request.body()
    return JSONResponse(BODY)
app = Starlette(routes=[Route("/v1/payments/card", charge, methods=["POST"])])
uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), log_level="warning", access_log=False)
"""


@contextlib.contextmanager
def sandbox(
    db_url: str, workers: int = 1, *, reconciler: bool = False, request_log: int = 1000
) -> Iterator[str]:
    with sandbox_process(db_url, workers, reconciler=reconciler, request_log=request_log) as (
        url,
        _proc,
    ):
        yield url


@contextlib.contextmanager
def sandbox_process(
    db_url: str,
    workers: int = 1,
    *,
    reconciler: bool = False,
    ready_seconds: float = 60.0,
    request_log: int = 1000,
) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """`sandbox`, and its process (whose children are the workers, when there are two);
    ``ready_seconds``: how long it may take to start answering; ``request_log``: how many
    requests each merchant's log keeps (0: off)."""
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    env = dict(os.environ, BENCH_SANDBOX_DB=db_url, BENCH_SANDBOX_WORKERS=str(workers))
    env["BENCH_SANDBOX_REQUEST_LOG"] = str(request_log)
    env["BENCH_SANDBOX_REPLAY_KEY"] = secrets.token_hex(32)
    env["BENCH_SANDBOX_RECONCILER"] = "1" if reconciler else "0"
    command = [sys.executable, "-c", SANDBOX_MAIN, str(port), str(workers)]
    with process(
        command, url + "/openapi.json", ready_seconds=ready_seconds, env=env, cwd=HERE.parent
    ) as proc:
        yield url, proc


@contextlib.contextmanager
def bare_starlette() -> Iterator[str]:
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    with process([sys.executable, "-c", STARLETTE_MAIN, str(port)], url + "/"):
        yield url


def ensure_prism() -> Path | None:
    """Install the pinned Prism from the npm registry (package-lock.json); None if impossible."""
    binary = HERE / "node_modules" / ".bin" / "prism"
    if binary.exists():
        return binary
    npm = shutil.which("npm")
    if npm is None:
        return None
    result = subprocess.run(
        [npm, "ci", "--silent", "--no-audit", "--no-fund"], cwd=HERE, check=False
    )
    return binary if result.returncode == 0 and binary.exists() else None


@contextlib.contextmanager
def prism(openapi: dict[str, object], workdir: Path) -> Iterator[str]:
    binary = ensure_prism()
    if binary is None:
        raise RuntimeError("Prism could not be installed (npm missing or the registry refused)")
    spec = workdir / "openapi.json"
    spec.write_text(json.dumps(openapi), encoding="utf-8")
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    env = dict(os.environ, NODE_ENV="production")
    with process(
        [str(binary), "mock", str(spec), "-h", "127.0.0.1", "-p", str(port)], url + "/", env=env
    ):
        yield url
