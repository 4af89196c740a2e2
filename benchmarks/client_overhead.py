"""Client overhead and async throughput, measured against a local sandbox in one run.

1. Overhead: the same signed read (``GET /v1/payments/{id}``) sent through
   `workbench.Client` and through bare `httpx2.Client` with precomputed headers,
   alternating in rounds; prints the median per-request time of each and the
   ratio (target: at most 1.10).
2. Throughput: with the sandbox adding 50 ms to every response, `AsyncClient`
   with 50 requests in flight against sequential `Client`; prints requests per
   second of each and the ratio (target: at least 20).

Run: ``uv run python -m benchmarks.client_overhead`` (starts its own sandbox in a
separate process on a free port), or add ``--base-url http://127.0.0.1:8765`` for
one already running with the demo keys and no rate limit. Not run by the tests.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx2

from benchmarks import _servers
from workbench._base_client import DEFAULT_LIMITS
from workbench._client import AsyncClient, Client
from workbench.config import DEFAULT_API_KEY, DEFAULT_SECRET_KEY
from workbench.signing import sign_request


@contextlib.contextmanager
def sandbox_url(base_url: str | None) -> Iterator[str]:
    """A running sandbox's address: the given one, or a fresh one in a process of its own."""
    if base_url:
        yield base_url.rstrip("/")
        return
    with (
        tempfile.TemporaryDirectory() as work,
        _servers.sandbox(f"sqlite:///{Path(work) / 'bench.db'}") as url,
    ):
        yield url


@dataclass(frozen=True)
class Overhead:
    """Median wall and client-process CPU seconds per request, Client against bare httpx2."""

    client_wall: float
    bare_wall: float
    client_cpu: float
    bare_cpu: float


def _timed(send: Callable[[], object], requests: int) -> tuple[float, float]:
    start, cpu = time.perf_counter(), time.process_time()
    for _ in range(requests):
        send()
    return (time.perf_counter() - start) / requests, (time.process_time() - cpu) / requests


def overhead(base_url: str, requests: int, rounds: int) -> Overhead:
    """The same signed read through `Client` and bare `httpx2.Client`, alternating rounds."""
    with Client(DEFAULT_API_KEY, DEFAULT_SECRET_KEY, base_url) as client:
        client.sandbox.set_latency(0)
        payment_id = client.payments.charge_card(
            transaction_id=f"bench-{time.time_ns()}", amount=1_000, card_token="tok_test_success"
        ).payment_id
        path = f"/v1/payments/{payment_id}"
        headers = sign_request(
            api_key=DEFAULT_API_KEY, secret_key=DEFAULT_SECRET_KEY, method="GET", url=path
        ).as_dict()
        with httpx2.Client(base_url=base_url) as bare:

            def bare_get() -> object:
                response = bare.get(path, headers=headers)
                response.raise_for_status()
                return response.json()

            def client_get() -> object:
                return client.payments.retrieve(payment_id)

            _timed(bare_get, requests)
            _timed(client_get, requests)  # warm both connections and code paths
            bare_runs: list[tuple[float, float]] = []
            client_runs: list[tuple[float, float]] = []
            for _ in range(rounds):
                bare_runs.append(_timed(bare_get, requests))
                client_runs.append(_timed(client_get, requests))
    return Overhead(
        client_wall=statistics.median(r[0] for r in client_runs),
        bare_wall=statistics.median(r[0] for r in bare_runs),
        client_cpu=statistics.median(r[1] for r in client_runs),
        bare_cpu=statistics.median(r[1] for r in bare_runs),
    )


@dataclass(frozen=True)
class Throughput:
    """Requests per second at a simulated latency, and the async clients' CPU per request."""

    sequential: float
    client_async: float
    bare_async: float
    client_cpu: float
    bare_cpu: float


async def _flood(send: Callable[[], Awaitable[object]], count: int) -> tuple[float, float]:
    """Requests per second and CPU seconds per request with 50 calls in flight."""
    gate = asyncio.Semaphore(50)

    async def one() -> None:
        async with gate:
            await send()

    await asyncio.gather(*(one() for _ in range(50)))  # open and warm the pool
    start, cpu = time.perf_counter(), time.process_time()
    await asyncio.gather(*(one() for _ in range(count)))
    return count / (time.perf_counter() - start), (time.process_time() - cpu) / count


def throughput(base_url: str, latency_ms: int, sequential: int, concurrent: int) -> Throughput:
    """Sequential `Client` against `AsyncClient` (and bare `httpx2.AsyncClient`), 50 in flight."""
    with Client(DEFAULT_API_KEY, DEFAULT_SECRET_KEY, base_url) as client:
        payment_id = client.payments.charge_card(
            transaction_id=f"bench-{time.time_ns()}", amount=1_000, card_token="tok_test_success"
        ).payment_id
        path = f"/v1/payments/{payment_id}"
        client.sandbox.set_latency(latency_ms)
        try:
            start = time.perf_counter()
            for _ in range(sequential):
                client.payments.retrieve(payment_id)
            sequential_rps = sequential / (time.perf_counter() - start)

            async def measure() -> tuple[tuple[float, float], tuple[float, float]]:
                headers = sign_request(
                    api_key=DEFAULT_API_KEY, secret_key=DEFAULT_SECRET_KEY, method="GET", url=path
                ).as_dict()
                async with (
                    AsyncClient(DEFAULT_API_KEY, DEFAULT_SECRET_KEY, base_url) as aclient,
                    httpx2.AsyncClient(base_url=base_url, limits=DEFAULT_LIMITS) as bare,
                ):

                    async def bare_get() -> object:
                        response = await bare.get(path, headers=headers)
                        response.raise_for_status()
                        return response.json()

                    ours = await _flood(lambda: aclient.payments.retrieve(payment_id), concurrent)
                    theirs = await _flood(bare_get, concurrent)
                    return ours, theirs

            (client_rps, client_cpu), (bare_rps, bare_cpu) = asyncio.run(measure())
        finally:
            client.sandbox.set_latency(0)
    return Throughput(sequential_rps, client_rps, bare_rps, client_cpu, bare_cpu)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base-url", help="a running sandbox (default: start one)")
    parser.add_argument("--requests", type=int, default=300, help="requests per round")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--latency-ms", type=int, default=50)
    parser.add_argument("--sequential", type=int, default=40)
    parser.add_argument("--concurrent", type=int, default=500)
    args = parser.parse_args()
    with sandbox_url(args.base_url) as base_url:
        o = overhead(base_url, args.requests, args.rounds)
        print(
            f"overhead: Client {o.client_wall * 1e3:.3f} ms/request, bare httpx2 "
            f"{o.bare_wall * 1e3:.3f} ms/request, ratio {o.client_wall / o.bare_wall:.3f} "
            "(target <= 1.10)"
        )
        print(
            f"client-process CPU: Client {o.client_cpu * 1e3:.3f} ms/request, bare httpx2 "
            f"{o.bare_cpu * 1e3:.3f} ms/request (the Client's own work: "
            f"{(o.client_cpu - o.bare_cpu) * 1e6:.0f} µs/request)"
        )
        t = throughput(base_url, args.latency_ms, args.sequential, args.concurrent)
        print(
            f"throughput at {args.latency_ms} ms latency: sequential Client {t.sequential:.1f} "
            f"req/s, AsyncClient 50 in flight {t.client_async:.1f} req/s, ratio "
            f"{t.client_async / t.sequential:.1f}x (target >= 20)"
        )
        print(
            f"baseline: bare httpx2.AsyncClient 50 in flight {t.bare_async:.1f} req/s "
            f"({t.bare_async / t.sequential:.1f}x sequential); AsyncClient/bare "
            f"{t.client_async / t.bare_async:.2f}; client-process CPU per request "
            f"{t.client_cpu * 1e3:.2f} ms (AsyncClient) vs {t.bare_cpu * 1e3:.2f} ms (bare)"
        )


if __name__ == "__main__":
    main()
