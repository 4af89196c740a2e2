"""Merchants on demand: what making one costs beside a card charge, and what 10,000 cost
every charge.

Two sandboxes (one process each, SQLite, background reconciler on, as ``workbench
sandbox`` runs), measured in the same run with the same client, in interleaved rounds:

1. ``one``: a fresh database, the built-in merchants only. Each round times signed card
   charges one after another on one kept-alive connection, with merchants made
   between them (``POST /sandbox/merchants``): the bar is a merchant in at most the
   time of 5 charges;
2. ``many``: the same, with 10,000 merchants made beforehand (each with its store,
   sealed keys, three customers and their saved cards). Each round times the same
   charges: the bar is within 10% of ``one``'s.

Prints the median round of each (milliseconds per request) and the ratios. Run:
``uv run python -m benchmarks.sandbox_merchants`` (``--merchants`` to change the
10,000). Not run by the tests.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import httpx2

from benchmarks import _servers
from workbench.config import DEFAULT_API_KEY, DEFAULT_SECRET_KEY
from workbench.sandbox import SandboxConfig
from workbench.sandbox.clock import wall_now
from workbench.sandbox.control.merchants import create_merchant
from workbench.sandbox.runtime import SandboxRuntime
from workbench.signing import sign_request

ROUTE = "/v1/payments/card"
#: Merchants made per transaction while filling the second database.
BATCH = 500
#: Charges sent to one sandbox before the other takes its turn.
CHUNK = 20


def fill(db_url: str, count: int) -> float:
    """Make ``count`` merchants in the database (as the route does); seconds taken."""
    runtime = SandboxRuntime(SandboxConfig(db_url=db_url, run_reconciler_in_background=False))
    runtime.open()
    started = time.perf_counter()
    try:
        for first in range(0, count, BATCH):
            with runtime.db.write() as conn:
                for _ in range(min(BATCH, count - first)):
                    create_merchant(conn, None, runtime.sealer, wall_now())
    finally:
        runtime.stop()
    return time.perf_counter() - started


def charge(client: httpx2.Client) -> None:
    fields = {
        "transactionId": f"bench-{uuid.uuid4()}",
        "amount": 15000,
        "currency": "TRY",
        "cardToken": "tok_test_success",
    }
    body = json.dumps(fields, separators=(",", ":")).encode()
    headers = sign_request(
        api_key=DEFAULT_API_KEY, secret_key=DEFAULT_SECRET_KEY, method="POST", url=ROUTE, body=body
    ).as_dict()
    headers["Idempotency-Key"] = str(uuid.uuid4())
    headers["Content-Type"] = "application/json"
    answer = client.post(ROUTE, content=body, headers=headers)
    assert answer.status_code == 201, answer.text


def make(client: httpx2.Client) -> None:
    answer = client.post("/sandbox/merchants", json={"name": "bench"})
    assert answer.status_code == 201, answer.text


def per_request_ms(action: Callable[[httpx2.Client], None], client: httpx2.Client, n: int) -> float:
    started = time.perf_counter()
    for _ in range(n):
        action(client)
    return (time.perf_counter() - started) * 1000 / n


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--merchants", type=int, default=10_000)
    parser.add_argument("--charges", type=int, default=400, help="charges per round")
    parser.add_argument("--makes", type=int, default=40, help="merchants made per round")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-merchants-") as tmp:
        work = Path(tmp)
        one_url, many_url = f"sqlite:///{work / 'one.db'}", f"sqlite:///{work / 'many.db'}"
        seconds = fill(many_url, args.merchants)
        print(
            f"filled: {args.merchants} merchants in {seconds:.1f} s "
            f"({seconds * 1000 / max(args.merchants, 1):.2f} ms each, {BATCH} a transaction)"
        )
        rounds: dict[str, list[float]] = {"one: charge": [], "one: make": [], "many: charge": []}
        with (
            _servers.sandbox(one_url, reconciler=True) as one,
            _servers.sandbox(many_url, reconciler=True) as many,
            httpx2.Client(base_url=one, timeout=30) as a,
            httpx2.Client(base_url=many, timeout=30) as b,
        ):
            for client in (a, b):  # warm-up: routes built, caches filled
                per_request_ms(charge, client, 50)
            per_request_ms(make, a, 5)
            # Within a round the two sandboxes take turns in small chunks, and the merchants
            # made come between charges: a busy spell of a shared machine hits all three.
            chunks = max(args.charges // CHUNK, 1)
            for _ in range(args.rounds):
                spent = {name: 0.0 for name in rounds}
                for chunk in range(chunks):
                    spent["one: charge"] += per_request_ms(charge, a, CHUNK)
                    spent["many: charge"] += per_request_ms(charge, b, CHUNK)
                    if chunk % max(chunks // args.makes, 1) == 0:
                        spent["one: make"] += per_request_ms(make, a, 1) * CHUNK
                made = sum(1 for c in range(chunks) if c % max(chunks // args.makes, 1) == 0)
                rounds["one: charge"].append(spent["one: charge"] / chunks)
                rounds["many: charge"].append(spent["many: charge"] / chunks)
                rounds["one: make"].append(spent["one: make"] / CHUNK / made)
    median = {name: statistics.median(values) for name, values in rounds.items()}
    print(f"{'median of ' + str(args.rounds) + ' rounds':<32} {'ms/request':>10}")
    for name, value in median.items():
        print(f"{name:<32} {value:>10.2f}")
    make_ratio = median["one: make"] / median["one: charge"]
    many_ratio = median["many: charge"] / median["one: charge"]
    per_round = [m / c for m, c in zip(rounds["many: charge"], rounds["one: charge"], strict=True)]
    print(f"making a merchant / a charge: {make_ratio:.2f} (bar: <= 5)")
    print(
        f"a charge with {args.merchants} merchants / with 2: per round "
        + ", ".join(f"{r:.2f}" for r in per_round)
        + f"; medians {many_ratio:.2f} (bar: <= 1.10)"
    )


if __name__ == "__main__":
    main()
