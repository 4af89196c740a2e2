"""Instructions per signed card charge: the sandbox against a bare Starlette route.

Throughput on a shared machine moves with whatever else runs; the instructions a server
executes for one request do not. Each server runs under valgrind's callgrind (counting
off while it starts and warms up), answers ``--charges`` requests one after the other
on one keep-alive connection while counting, and its count is divided by the number of
requests:

1. the sandbox, one process on SQLite (WAL), every request a new signed charge, as
   `benchmarks.sandbox_charges` sends them;
2. a bare Starlette route returning a constant (the same one as there): the cost of the
   HTTP server and the framework, which the sandbox cannot go below.

Prints instructions per request for both and their ratio. The same tree gives the same
figures to within about 1% whatever else the machine does, so two commits compare by
running this on each. Needs valgrind (Debian's package). Run:
``uv run python -m benchmarks.charge_instructions``. Not run by the tests.
"""

from __future__ import annotations

import argparse
import os
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx2

from benchmarks import _servers
from benchmarks._callgrind import totals
from benchmarks.sandbox_charges import ROUTE, signed_charges

#: Requests answered before counting starts (imports, caches, prepared statements).
WARM_UP = 100
#: Seconds the server's idle work is counted for, to take it off the requests' count.
IDLE_SECONDS = 10.0


def count(
    main: str,
    ready: str,
    requests: list[tuple[str, str, dict[str, str], str]],
    env: dict[str, str],
    workdir: Path,
) -> float:
    """Instructions per request the server started by ``main`` executed answering
    ``requests`` (after `WARM_UP` of them), less what it does idle meanwhile."""
    port = _servers.free_port()
    out = workdir / f"callgrind-{port}.out"
    command = [
        "valgrind",
        "--tool=callgrind",
        "--instr-atstart=no",
        f"--callgrind-out-file={out}",
        sys.executable,
        "-c",
        main,
        str(port),
        "1",
    ]
    proc = subprocess.Popen(
        command,
        env=env,
        cwd=_servers.HERE.parent,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"

    def control(*args: str) -> None:
        subprocess.run(["callgrind_control", *args, str(proc.pid)], check=True, capture_output=True)

    try:
        _servers.wait_ready(url + ready, timeout=900)
        with httpx2.Client(base_url=url, timeout=120) as client:

            def send(rows: list[tuple[str, str, dict[str, str], str]]) -> None:
                for method, path, headers, body in rows:
                    response = client.request(method, path, headers=headers, content=body)
                    if response.status_code >= 300:
                        raise SystemExit(f"{url}: {response.status_code} {response.text[:200]}")

            send(requests[:WARM_UP])
            control("-z")
            control("-i", "on")
            started = time.monotonic()
            send(requests[WARM_UP:])
            busy = time.monotonic() - started
            control("-d", "busy")
            # A server also works while idle (uvicorn's tick, timers): more of it the
            # longer the requests took, which a busy machine stretches. Counted alone for
            # as long, and taken off.
            time.sleep(IDLE_SECONDS)
            control("-d", "idle")
            control("-i", "off")
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=600)
    dumps = sorted(workdir.glob(f"{out.name}.*"), key=lambda p: int(p.suffix[1:]))
    busy_total, idle_total = (totals(dump) for dump in dumps[-2:])
    return (busy_total - idle_total * busy / IDLE_SECONDS) / (len(requests) - WARM_UP)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--charges", type=int, default=300)
    args = parser.parse_args()
    if shutil.which("valgrind") is None:
        raise SystemExit("valgrind is not installed: apt-get install valgrind")
    requests = signed_charges(WARM_UP + args.charges)
    with tempfile.TemporaryDirectory(prefix="bench-instructions-") as tmp:
        work = Path(tmp)
        env = dict(
            os.environ,
            BENCH_SANDBOX_DB=f"sqlite:///{work / 'one.db'}",
            BENCH_SANDBOX_WORKERS="1",
            BENCH_SANDBOX_REPLAY_KEY=secrets.token_hex(32),
            BENCH_SANDBOX_RECONCILER="0",
        )
        sandbox = count(_servers.SANDBOX_MAIN, "/openapi.json", requests, env, work)
        bare = (
            count(_servers.STARLETTE_MAIN, ROUTE, requests, dict(os.environ), work) / args.charges
        )
    print(f"{'server':<30} {'instructions/request':>22}")
    print(f"{'sandbox, 1 worker (SQLite)':<30} {sandbox:>22,.0f}")
    print(f"{'bare starlette (constant)':<30} {bare:>22,.0f}")
    print(f"sandbox / bare starlette: {sandbox / bare:.2f}")


if __name__ == "__main__":
    main()
