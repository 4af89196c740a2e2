"""List pages: what one listed item costs, subscriptions and events, beside plain JSON.

For N items (default 10,000) in a fresh SQLite file (inserted in bulk, so the setup is
not what is measured), this lists

1. every subscription through signed ``GET /v1/subscriptions`` at 100 per page,
   following ``nextCursor``;
2. every event through signed ``GET /sandbox/events`` (one answer);

and prints the µs per item of each, end to end (the client's parsing included), and
then of the server's part alone, called in the process: the page as the route builds
it (a page's rows read and written as JSON bytes) beside the plain way measured in the
same run (every column read, a dict per item by `views.list_item`, ``dumps``; for
events, `events.list_events` then ``dumps``). The baseline of every figure is the cost
of ``json.dumps`` of the same items as dicts, measured in the same run (what any list
must at least do); each figure is printed with its ratio to it. Run: ``uv run python -m
benchmarks.list_pages [--items 10000]``.
Not run by the tests.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import socket
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx2
import sqlalchemy as sa
import uvicorn

from workbench._auth import SigningAuth
from workbench.config import DEFAULT_API_KEY, DEFAULT_SECRET_KEY
from workbench.sandbox import DEMO_MERCHANT_ID, DEMO_STORE_ID, SandboxConfig, create_app, events
from workbench.sandbox.clock import business_now
from workbench.sandbox.replies import dumps
from workbench.sandbox.runtime import SandboxRuntime
from workbench.sandbox.subscriptions import after, service, subscriptions
from workbench.sandbox.subscriptions.cursor import decode, encode, ensure_secret
from workbench.sandbox.subscriptions.service import hash_digest
from workbench.sandbox.subscriptions.views import list_item
from workbench.spec.events import PaymentCapturedData

PAGE = 100


def _demo_auth() -> SigningAuth:
    """Signs each request as the demo merchant, as the client does."""
    return SigningAuth(DEFAULT_API_KEY, DEFAULT_SECRET_KEY)


@contextlib.contextmanager
def serve(db_url: str) -> Iterator[tuple[str, SandboxRuntime]]:
    """The sandbox on a free port (TCP_NODELAY through IPPROTO_TCP, so no delayed-ACK
    waits, which would be most of what a page costs)."""
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
    """``count`` subscriptions and ``count`` events on the demo merchant."""
    with sandbox.db.write() as conn:
        now = business_now(conn, DEMO_MERCHANT_ID).replace(microsecond=0)
        conn.execute(
            sa.insert(subscriptions),
            [
                {
                    "id": f"sub_bench{n:015d}",
                    "merchant_id": DEMO_MERCHANT_ID,
                    "store_id": DEMO_STORE_ID,
                    "customer_id": "cus_demo_ayse",
                    "public_hash_sha256": hash_digest(f"bench-{n}"),
                    "status": "active",
                    "amount_minor": 9_990 + n,
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
            ],
        )
        for n in range(count):
            events.emit(
                conn,
                merchant_id=DEMO_MERCHANT_ID,
                store_id=DEMO_STORE_ID,
                data=PaymentCapturedData(
                    payment_id=f"pay_bench{n:015d}",
                    transaction_id=f"txn-{n}",
                    status="captured",
                    amount=10_000 + n,
                    currency="TRY",
                ),
                now=now - timedelta(seconds=count - n),
                look_up_webhook=False,
            )


def list_subscriptions(client: httpx2.Client) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    params: dict[str, str | int] = {"limit": PAGE}
    while True:
        page = client.get("/v1/subscriptions", params=params)
        assert page.status_code == 200, page.text
        body = page.json()
        items.extend(body["items"])
        if body["nextCursor"] is None:
            return items
        params = {"limit": PAGE, "cursor": body["nextCursor"]}


def list_events(client: httpx2.Client) -> list[dict[str, Any]]:
    page = client.get("/sandbox/events")
    assert page.status_code == 200, page.text
    items: list[dict[str, Any]] = page.json()["items"]
    return items


def pages_in_process(sandbox: SandboxRuntime, plain: bool) -> int:
    """Every subscriptions page as the route builds it (``plain``: the plain way)."""
    secret = ensure_secret(sandbox.db)
    filters = service.ListFilters()
    cursor: str | None = None
    size = 0
    while True:
        with sandbox.db.read() as conn:
            if plain:
                query = sa.select(subscriptions).where(
                    subscriptions.c.merchant_id == DEMO_MERCHANT_ID
                )
                if cursor is not None:
                    after = decode(secret, DEMO_MERCHANT_ID, filters.scope(), cursor)
                    query = query.where(subscriptions.c.seq > after)
                rows = conn.execute(query.order_by(subscriptions.c.seq).limit(PAGE + 1)).all()
                more = len(rows) > PAGE
                rows = rows[:PAGE]
                next_cursor = (
                    encode(secret, DEMO_MERCHANT_ID, filters.scope(), int(rows[-1].seq))
                    if more
                    else None
                )
                body = dumps({"items": [list_item(r) for r in rows], "nextCursor": next_cursor})
            else:
                body = service.list_page(conn, DEMO_MERCHANT_ID, filters, PAGE, cursor, secret)
                next_cursor = json.loads(body)["nextCursor"]
        size += len(body)
        if next_cursor is None:
            return size
        cursor = next_cursor


def events_in_process(sandbox: SandboxRuntime, plain: bool) -> int:
    """The events list as the route builds it (``plain``: the plain way)."""
    with sandbox.db.read() as conn:
        if plain:
            return len(dumps({"items": events.list_events(conn, DEMO_MERCHANT_ID)}))
        return len(events.list_events_json(conn, DEMO_MERCHANT_ID))


def per_item(action: Callable[[], Any], count: int, repeat: int) -> float:
    """The best of ``repeat`` runs of ``action``, in µs per item."""
    best = float("inf")
    for _ in range(repeat):
        started = time.perf_counter()
        action()
        best = min(best, time.perf_counter() - started)
    return best / count * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=10_000, help="subscriptions and events")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each; the best counts")
    args = parser.parse_args()
    count = args.items
    with (
        tempfile.TemporaryDirectory() as tmp,
        serve(f"sqlite:///{Path(tmp) / 'bench.db'}") as (base, sandbox),
        httpx2.Client(base_url=base, auth=_demo_auth(), timeout=600) as client,
    ):
        populate(sandbox, count)
        subs = list_subscriptions(client)
        evts = list_events(client)
        assert len(subs) == count, len(subs)
        assert len(evts) == count, len(evts)
        with sandbox.db.read() as conn:
            rows = conn.execute(sa.select(subscriptions).order_by(subscriptions.c.seq)).all()
        sub_dicts = [list_item(row) for row in rows]
        repeat = args.repeat
        figures = {
            "subscriptions": (
                per_item(lambda: json.dumps({"items": sub_dicts}), count, repeat),
                per_item(lambda: list_subscriptions(client), count, repeat),
                per_item(lambda: pages_in_process(sandbox, False), count, repeat),
                per_item(lambda: pages_in_process(sandbox, True), count, repeat),
            ),
            "events": (
                per_item(lambda: json.dumps({"items": evts}), count, repeat),
                per_item(lambda: list_events(client), count, repeat),
                per_item(lambda: events_in_process(sandbox, False), count, repeat),
                per_item(lambda: events_in_process(sandbox, True), count, repeat),
            ),
        }
    print(
        f"{count:,} items per list; subscriptions at {PAGE} per page; µs per item, and "
        "(ratio to json.dumps of the same dicts); shared machine: noisy"
    )
    print(f"{'list':>14} {'json.dumps':>10} {'HTTP':>14} {'server':>14} {'server, plain':>14}")
    for name, (baseline, *measured) in figures.items():
        cells = " ".join(f"{m:>7.1f} ({m / baseline:>4.1f})" for m in measured)
        print(f"{name:>14} {baseline:>10.2f} {cells}")


if __name__ == "__main__":
    main()
