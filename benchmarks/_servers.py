"""Servers the benchmarks measure, each in a process of its own on a free loopback port."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx

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
            httpx.get(url, timeout=1.0)
            return
        except httpx.TransportError:
            time.sleep(0.1)
    raise RuntimeError(f"{url} did not answer within {timeout} s")


@contextlib.contextmanager
def process(
    command: list[str], ready_url: str, **kwargs: object
) -> Iterator[subprocess.Popen[bytes]]:
    proc = subprocess.Popen(
        command,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        **kwargs,  # type: ignore[call-overload]
    )
    try:
        wait_ready(ready_url)
        yield proc
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()


SANDBOX_MAIN = """
import sys, uvicorn
from workbench.sandbox import SandboxConfig, create_app
config = SandboxConfig(db_url=sys.argv[2], rate_limit_per_second=0,
                       run_reconciler_in_background=False)
uvicorn.run(create_app(config), host="127.0.0.1", port=int(sys.argv[1]),
            log_level="warning", access_log=False)
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
def sandbox(db_url: str) -> Iterator[str]:
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    with process([sys.executable, "-c", SANDBOX_MAIN, str(port), db_url], url + "/openapi.json"):
        yield url


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
