"""Subscriptions at scale: listing page by page and renewing in one clock advance stay linear.

For N = 1,000 and N = 10,000 subscriptions (each in a fresh SQLite file, inserted in
bulk so the setup is not what is measured):

1. list every subscription through signed ``GET /v1/subscriptions`` at 100 per page,
   following ``nextCursor``;
2. advance the business clock by one month in one ``POST /sandbox/clock/advance``, so
   all N fall due and are renewed (claim, card charge, finish, events).

Prints the per-item cost of each at both sizes and the ratio 10,000 / 1,000 (linear
means about 1.0). Run: ``uv run python benchmarks/subscriptions_scale.py [--sizes 1000
10000]``. Not run by the tests.
"""

from __future__ import annotations

import argparse
import contextlib
import socket
import tempfile
import threading
import time
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import httpx2
import sqlalchemy as sa
import uvicorn

from workbench.config import DEFAULT_API_KEY, DEFAULT_SECRET_KEY
from workbench.sandbox import DEMO_MERCHANT_ID, DEMO_STORE_ID, SandboxConfig, create_app
from workbench.sandbox.clock import business_now
from workbench.sandbox.runtime import SandboxRuntime
from workbench.sandbox.subscriptions import after, subscription_charges, subscriptions
from workbench.sandbox.subscriptions.service import hash_digest
from workbench.signing import sign_request

MONTH_SECONDS = 31 * 86_400


class Signer(httpx2.Auth):
    """Signs each request over its exact body."""

    requires_request_body = True

    def auth_flow(self, request: httpx2.Request) -> Iterator[httpx2.Request]:
        headers = sign_request(
            api_key=DEFAULT_API_KEY,
            secret_key=DEFAULT_SECRET_KEY,
            method=request.method,
            url=str(request.url),
            body=request.content,
        )
        request.headers.update(headers.as_dict())
        yield request


@contextlib.contextmanager
def serve(db_url: str) -> Iterator[tuple[str, SandboxRuntime]]:
    """The sandbox on a free port (TCP_NODELAY through IPPROTO_TCP, so no delayed-ACK waits)."""
    config = SandboxConfig(
        db_url=db_url, rate_limit_per_second=0, run_reconciler_in_background=False
    )
    app = create_app(config)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    server = uvicorn.Server(
        uvicorn.Config(app, log_level="warning", access_log=False, lifespan="on")
    )
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{port}", app.state.sandbox
    finally:
        server.should_exit = True
        thread.join(timeout=60)


def populate(sandbox: SandboxRuntime, count: int) -> None:
    """``count`` monthly subscriptions on the demo merchant, all due in one month."""
    with sandbox.db.write() as conn:
        now = business_now(conn, DEMO_MERCHANT_ID).replace(microsecond=0)
        rows = [
            {
                "id": f"sub_bench{n:015d}",
                "merchant_id": DEMO_MERCHANT_ID,
                "store_id": DEMO_STORE_ID,
                "customer_id": "cus_demo_ayse",
                "public_hash_sha256": hash_digest(f"bench-{n}"),
                "status": "active",
                "amount_minor": 9_990,
                "currency": "TRY",
                "interval_count": 1,
                "interval_unit": "month",
                "cycle_number": 0,
                "anchor_at": now,
                "periods": 1,
                "next_charge_at": after(now, "month", 1, 1),
                "attempts": 0,
                "card_token": "tok_test_success",
                "card_last4": "4242",
                "card_brand": "visa",
                "cancel_at_period_end": False,
                "generate_invoices": False,
                "created_at": now - timedelta(seconds=count - n),
            }
            for n in range(count)
        ]
        conn.execute(sa.insert(subscriptions), rows)


def measure(count: int) -> tuple[float, float]:
    """Seconds per item: (listing, renewal)."""
    with tempfile.TemporaryDirectory() as tmp:
        url = f"sqlite:///{Path(tmp) / 'bench.db'}"
        with (
            serve(url) as (base, sandbox),
            httpx2.Client(base_url=base, auth=Signer(), timeout=600) as client,
        ):
            populate(sandbox, count)
            seen = 0
            params: dict[str, str | int] = {"limit": 100}
            started = time.perf_counter()
            while True:
                page = client.get("/v1/subscriptions", params=params).json()
                seen += len(page["items"])
                if page["nextCursor"] is None:
                    break
                params = {"limit": 100, "cursor": page["nextCursor"]}
            listing = time.perf_counter() - started
            assert seen == count, (seen, count)
            started = time.perf_counter()
            response = client.post("/sandbox/clock/advance", json={"seconds": MONTH_SECONDS})
            renewing = time.perf_counter() - started
            assert response.status_code == 200, response.text
            with sandbox.db.read() as conn:
                charged = conn.execute(
                    sa.select(sa.func.count()).select_from(subscription_charges)
                ).scalar_one()
            assert charged == count, (charged, count)
    return listing / count, renewing / count


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs=2, default=[1_000, 10_000])
    args = parser.parse_args()
    small, large = args.sizes
    results = {size: measure(size) for size in (small, large)}
    print(f"{'subscriptions':>14} {'list µs/item':>14} {'renew µs/item':>14}")
    for size, (listing, renewing) in results.items():
        print(f"{size:>14,} {listing * 1e6:>14.1f} {renewing * 1e6:>14.1f}")
    list_ratio = results[large][0] / results[small][0]
    renew_ratio = results[large][1] / results[small][1]
    print(f"ratio {large:,} / {small:,}: listing {list_ratio:.2f}, renewing {renew_ratio:.2f}")


if __name__ == "__main__":
    main()
