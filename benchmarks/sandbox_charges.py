"""Signed, persisted card charges per second: the sandbox against a stateless mock.

Five servers on this machine, measured in the same run with the same load
(wrk from a separate process, the same number of connections):

1. the sandbox, one process: every request is a new signed charge with a fresh
   Idempotency-Key and transactionId, verified, fenced, written to SQLite (WAL) and
   answered;
2. the same with two worker processes on one SQLite file (``workbench sandbox
   --workers 2``), which take turns at the file's write lock;
3. the same two workers on PostgreSQL (a database the benchmark creates on
   127.0.0.1:5432, or ``WORKBENCH_BENCH_PG_URL``, and drops at the end; left out,
   saying why, when no PostgreSQL answers);
4. Prism (Stoplight's OpenAPI mock server, pinned in package-lock.json) serving canned
   responses for the same route from the sandbox's own OpenAPI document;
5. a bare Starlette route returning a constant, one process: the ceiling of this stack.

Each round gives every server the same load in turn (each sandbox its own file, and
charges it has never seen); prints the median round of each server (requests/second,
p50/p99 latency), and for each sandbox the ratio to Prism of every round and of the
medians (the bar: at least 1.5 for SQLite, 1.0 for PostgreSQL), and the PostgreSQL
sandbox's ratio to the one-worker SQLite sandbox. Every sandbox keeps its request log
(``--request-log N`` requests per merchant, 0: off); ``--compare-request-log`` adds a
one-worker sandbox without it to every round and prints the log's cost as a ratio. Run:
``uv run python -m benchmarks.sandbox_charges``. Not run by the tests.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import tempfile
import uuid
from pathlib import Path

import httpx2

from benchmarks import _servers, _wrk
from workbench.config import DEFAULT_API_KEY, DEFAULT_SECRET_KEY
from workbench.signing import sign_request

ROUTE = "/v1/payments/card"


def signed_charges(count: int) -> list[tuple[str, str, dict[str, str], str]]:
    rows = []
    for _ in range(count):
        body = json.dumps(
            {
                "transactionId": f"bench-{uuid.uuid4()}",
                "amount": 15000,
                "currency": "TRY",
                "cardToken": "tok_test_success",
                "threeDSecure": False,
            },
            separators=(",", ":"),
        )
        headers = sign_request(
            api_key=DEFAULT_API_KEY,
            secret_key=DEFAULT_SECRET_KEY,
            method="POST",
            url=ROUTE,
            body=body.encode(),
        ).as_dict()
        headers["Idempotency-Key"] = str(uuid.uuid4())
        headers["Content-Type"] = "application/json"
        rows.append(("POST", ROUTE, headers, body))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=int, default=10)
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--request-log",
        type=int,
        default=1000,
        help="requests each merchant's request log keeps in the sandboxes (0: off)",
    )
    parser.add_argument(
        "--compare-request-log",
        action="store_true",
        help="also measure one worker without the request log, in the same rounds",
    )
    args = parser.parse_args()
    if not _wrk.wrk_available():
        raise SystemExit("wrk is not installed: apt-get install wrk")
    no_log = "sandbox, 1 worker, no log"
    one, two, pg, prism, ceiling = (
        "sandbox, 1 worker",
        "sandbox, 2 workers",
        "sandbox, 2 workers, postgres",
        "prism (canned)",
        "bare starlette (constant)",
    )
    with tempfile.TemporaryDirectory(prefix="bench-charges-") as tmp, contextlib.ExitStack() as up:
        work = Path(tmp)
        log = args.request_log
        urls = {
            one: up.enter_context(
                _servers.sandbox(f"sqlite:///{work / 'one.db'}", request_log=log)
            ),
            two: up.enter_context(
                _servers.sandbox(f"sqlite:///{work / 'two.db'}", workers=2, request_log=log)
            ),
        }
        if args.compare_request_log:
            urls[no_log] = up.enter_context(
                _servers.sandbox(f"sqlite:///{work / 'nolog.db'}", request_log=0)
            )
        try:
            pg_url = up.enter_context(_servers.postgres_database())
        except RuntimeError as exc:
            print(f"{pg}: left out ({exc})")
        else:
            urls[pg] = up.enter_context(_servers.sandbox(pg_url, workers=2, request_log=log))
        openapi = httpx2.get(urls[one] + "/openapi.json").json()
        urls[prism] = up.enter_context(_servers.prism(openapi, work))
        urls[ceiling] = up.enter_context(_servers.bare_starlette())
        names = [name for name in (one, no_log, two, pg, prism, ceiling) if name in urls]
        rounds: dict[str, list[_wrk.Load]] = {name: [] for name in names}

        def load(name: str, requests: Path, seconds: int) -> _wrk.Load:
            return _wrk.run(
                urls[name] + ROUTE,
                requests,
                seconds=seconds,
                connections=args.connections,
                workdir=work,
            )

        def fresh(label: str, seconds: int) -> Path:
            # Distinct charges, signed just now (the timestamps must be within 5 minutes),
            # enough that wrk never wraps around to an idempotent replay.
            path = work / f"{label}.tsv"
            _wrk.write_requests(path, signed_charges(6000 * seconds))
            return path

        for name in names:  # warm-up, on charges no measured round sends again
            load(name, fresh(f"warm-{names.index(name)}", 2), 2)
        # Rounds interleave the servers, so a slow spell of a shared machine hits them all.
        for number in range(args.rounds):
            requests = fresh(f"round-{number}", args.seconds)
            for name in names:
                rounds[name].append(load(name, requests, args.seconds))
    print(
        f"{'server (median of rounds)':<30} {'req/s':>9} {'p50 ms':>8} {'p99 ms':>8} {'non-2xx':>8}"
    )
    median: dict[str, _wrk.Load] = {}
    for name in names:
        ordered = sorted(rounds[name], key=lambda load: load.requests_per_second)
        median[name] = ordered[len(ordered) // 2]
        total_non_2xx = sum(load.non_2xx for load in rounds[name])
        m = median[name]
        print(
            f"{name:<30} {m.requests_per_second:>9.0f} {m.p50_ms:>8.1f} "
            f"{m.p99_ms:>8.1f} {total_non_2xx:>8}"
        )

    def ratios(name: str, base: str, bar: str) -> None:
        per_round = [
            s.requests_per_second / b.requests_per_second
            for s, b in zip(rounds[name], rounds[base], strict=True)
        ]
        ratio = median[name].requests_per_second / median[base].requests_per_second
        print(
            f"{name} / {base}: per round "
            + ", ".join(f"{r:.2f}" for r in per_round)
            + f"; medians {ratio:.2f}{bar}"
        )

    ratios(one, prism, " (bar: >= 1.5)")
    if no_log in rounds:
        ratios(no_log, prism, " (bar: >= 1.5)")
        ratios(one, no_log, " (the request log's cost: log on / log off)")
    ratios(two, prism, " (bar: >= 1.5)")
    if pg in rounds:
        ratios(pg, prism, " (bar: >= 1.0)")
        ratios(pg, one, "")
    ratios(two, ceiling, "")
    failed = [name for name in names if any(load.non_2xx for load in rounds[name])]
    if failed:
        # A refused request is answered faster than a charge: its figures mean nothing.
        raise SystemExit(f"not every request was a charge (non-2xx answers): {', '.join(failed)}")


if __name__ == "__main__":
    main()
