"""Subscriptions at scale: a month-end in one clock advance, against what the database can do.

For each backend (an SQLite file served by one worker; PostgreSQL served by two, as
``workbench sandbox --workers 2`` serves it, in a database the benchmark makes on
127.0.0.1:5432 or ``WORKBENCH_BENCH_PG_URL`` and drops) and each size N:

1. N monthly subscriptions are seeded on the demo merchant by the sandbox's own creation
   (`workbench.sandbox.subscriptions.service.create_many`: the rows and the
   ``subscription.created`` events a signed ``POST /v1/subscriptions`` writes, 2,000 per
   transaction), not by N requests;
2. every subscription is listed through signed ``GET /v1/subscriptions``, 100 a page
   (``--no-list`` leaves this out);
3. one signed ``POST /sandbox/clock/advance`` of 31 days: all N fall due and are
   renewed (claimed, charged, finished, their events recorded). Printed: milliseconds
   per renewal, and the growth of the serving processes' memory: the highest resident
   set any of them reached (``VmHWM``) minus what it held before the advance, and the
   same for its anonymous part alone (``RssAnon``, read every 0.2 s): the resident set
   also counts the pages of the database file SQLite maps and reads through
   (``mmap_size``), which belong to the kernel's file cache. On SQLite both figures
   take in the caches the storage layer sets per connection (``cache_size`` 64 MB,
   ``mmap_size`` 256 MB), which fill as the file grows and stop there: the renewal pass
   itself holds one batch;
4. the floor, in the same run, on a second database of the same backend seeded the
   same way: the rows a renewal writes (its ``subscription_charges`` row, its payment,
   its two events, and the update of its subscription) written with SQLAlchemy Core,
   500 renewals per transaction, on one connection. Printed beside the sandbox's
   figure, with their ratio.

Every renewal is checked afterwards (N charges done, N payments, N renewed events).
Last, the per-renewal cost of the largest size over the smallest (linear: about 1.0).
Run: ``uv run python -m benchmarks.subscriptions_scale [--sizes 1000 10000]
[--backends sqlite]``. Not run by the tests. On a shared machine the milliseconds move
with the load; the ratio to the floor measured beside them is the figure to compare.
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx2
import sqlalchemy as sa

from benchmarks import _servers
from workbench._auth import SigningAuth
from workbench.config import DEFAULT_API_KEY, DEFAULT_SECRET_KEY
from workbench.sandbox import DEMO_MERCHANT_ID, DEMO_STORE_ID, SandboxConfig
from workbench.sandbox.clock import business_now
from workbench.sandbox.context import Caller
from workbench.sandbox.payments.service import new_payment
from workbench.sandbox.payments.tables import payments
from workbench.sandbox.runtime import SandboxRuntime
from workbench.sandbox.storage import Database
from workbench.sandbox.subscriptions import subscription_charges, subscriptions
from workbench.sandbox.subscriptions.models import SubscriptionRequest
from workbench.sandbox.subscriptions.service import create_many
from workbench.sandbox.tables import events

MONTH_SECONDS = 31 * 86_400
#: Subscriptions made per transaction when seeding.
SEED_CHUNK = 2_000
#: Renewals per transaction of the floor.
FLOOR_BATCH = 500
BODY = {
    "storeId": DEMO_STORE_ID,
    "customerId": "cus_demo_ayse",  # tok_test_success: every renewal is captured
    "amountMinor": 9_990,
    "currency": "TRY",
    "intervalCount": 1,
    "intervalUnit": "month",
}


@dataclass
class Result:
    """One backend at one size."""

    renew_ms: float
    floor_ms: float
    rss_growth_mb: float
    anon_growth_mb: float
    list_us: float | None
    seed_s: float


def seed(db_url: str, count: int) -> None:
    """``count`` subscriptions on the demo merchant, made as the route makes them."""
    db = Database(db_url)
    caller = Caller(
        api_key=DEFAULT_API_KEY, merchant_id=DEMO_MERCHANT_ID, store_id=DEMO_STORE_ID, request_id=""
    )
    request = SubscriptionRequest.model_validate(BODY)
    try:
        for start in range(0, count, SEED_CHUNK):
            with db.write() as conn:
                create_many(conn, caller, request, min(SEED_CHUNK, count - start))
    finally:
        db.dispose()


def _tree(pid: int) -> list[int]:
    """``pid`` and every process below it (read from /proc)."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError):
                stat = (entry / "stat").read_text()
                parents[int(entry.name)] = int(stat.rpartition(")")[2].split()[1])
    found, frontier = [pid], [pid]
    while frontier:
        below = [child for child, parent in parents.items() if parent in frontier]
        found += below
        frontier = below
    return found


def _memory(pid: int) -> dict[str, int]:
    """``VmRSS``, ``VmHWM`` and ``RssAnon`` of a process, in kB (empty if it is gone)."""
    values: dict[str, int] = {}
    with contextlib.suppress(OSError):
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            name, _, rest = line.partition(":")
            if name in ("VmRSS", "VmHWM", "RssAnon"):
                values[name] = int(rest.split()[0])
    return values


class AnonPeak:
    """The highest ``RssAnon`` of each process, read every 0.2 s while it runs.

    The resident set also counts the database file's pages that SQLite maps
    (``mmap_size``) and reads through, which the kernel may drop at any time; the
    anonymous part is what the process allocated (its objects, SQLite's page cache).
    """

    def __init__(self, pids: list[int]) -> None:
        self.peak = {pid: _memory(pid).get("RssAnon", 0) for pid in pids}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)

    def _watch(self) -> None:
        while not self._stop.wait(0.2):
            for pid in self.peak:
                self.peak[pid] = max(self.peak[pid], _memory(pid).get("RssAnon", 0))

    def __enter__(self) -> AnonPeak:
        self._thread.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self._stop.set()
        self._thread.join()
        for pid in self.peak:
            self.peak[pid] = max(self.peak[pid], _memory(pid).get("RssAnon", 0))


def list_all(client: httpx2.Client, count: int) -> float:
    """Seconds per item of listing every subscription, 100 a page."""
    seen = 0
    params: dict[str, str | int] = {"limit": 100}
    started = time.perf_counter()
    while True:
        page = client.get("/v1/subscriptions", params=params).json()
        seen += len(page["items"])
        if page["nextCursor"] is None:
            break
        params = {"limit": 100, "cursor": page["nextCursor"]}
    elapsed = time.perf_counter() - started
    assert seen == count, (seen, count)
    return elapsed / count


def check_renewed(db_url: str, count: int) -> None:
    """Every subscription renewed once: its charge done, its payment, its event."""
    engine = sa.create_engine(db_url)
    try:
        with engine.connect() as conn:
            done = conn.execute(
                sa.select(sa.func.count())
                .select_from(subscription_charges)
                .where(subscription_charges.c.state == "done")
            ).scalar_one()
            paid = conn.execute(
                sa.select(sa.func.count())
                .select_from(payments)
                .where(payments.c.status == "captured")
            ).scalar_one()
            renewed = conn.execute(
                sa.select(sa.func.count())
                .select_from(events)
                .where(events.c.type == "subscription.renewed")
            ).scalar_one()
            cycles = conn.execute(
                sa.select(sa.func.count())
                .select_from(subscriptions)
                .where(subscriptions.c.cycle_number == 1)
            ).scalar_one()
    finally:
        engine.dispose()
    assert (done, paid, renewed, cycles) == (count,) * 4, (done, paid, renewed, cycles)


def measure_sandbox(db_url: str, count: int, workers: int, listing: bool) -> Result:
    """Seed, serve, list, advance a month; ms per renewal and the memory it took."""
    # A loaded machine has taken more than a minute to start two workers.
    with _servers.sandbox_process(db_url, workers, ready_seconds=300) as (base, proc):
        started = time.perf_counter()
        seed(db_url, count)
        seed_s = time.perf_counter() - started
        auth = SigningAuth(DEFAULT_API_KEY, DEFAULT_SECRET_KEY)  # as the client signs
        with httpx2.Client(base_url=base, auth=auth, timeout=3_600) as client:
            list_us = list_all(client, count) * 1e6 if listing else None
            # A request first, so each worker has built what it builds once.
            assert client.get("/sandbox/fixtures").status_code == 200
            before = {pid: _memory(pid) for pid in _tree(proc.pid)}
            with AnonPeak(list(before)) as anon:
                started = time.perf_counter()
                response = client.post(
                    "/sandbox/clock/advance",
                    json={"seconds": MONTH_SECONDS},
                    headers={"Idempotency-Key": str(uuid.uuid4())},
                )
                elapsed = time.perf_counter() - started
            assert response.status_code == 200, response.text
            growth = max(
                _memory(pid).get("VmHWM", 0) - held.get("VmRSS", 0) for pid, held in before.items()
            )
            anon_growth = max(
                anon.peak[pid] - held.get("RssAnon", 0) for pid, held in before.items()
            )
    check_renewed(db_url, count)
    return Result(elapsed / count * 1e3, 0.0, growth / 1024, anon_growth / 1024, list_us, seed_s)


def _floor_rows(db_url: str) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    """A renewal's claim, payment and event rows as the sandbox makes them (templates)."""
    engine = sa.create_engine(db_url)
    try:
        with engine.connect() as conn:
            now = business_now(conn, DEMO_MERCHANT_ID)
    finally:
        engine.dispose()
    claim = {
        "merchant_id": DEMO_MERCHANT_ID,
        "subscription_id": "",
        "cycle_number": 1,
        "transaction_id": "",
        "kind": "renewal",
        "state": "done",
        "amount_minor": 9_990,
        "due_at": now,
        "payment_id": "",
        "payment_status": "captured",
        "charged_at": now,
    }
    payment = new_payment(
        merchant_id=DEMO_MERCHANT_ID,
        store_id=DEMO_STORE_ID,
        transaction_id="",
        fingerprint="0" * 64,
        amount=9_990,
        currency="TRY",
        card={
            "card_token": "tok_test_success",
            "behaviour": "success",
            "card_mask": "424242******4242",
            "card_brand": "visa",
            "card_type": "credit",
            "bin": "424242",
        },
        to="captured",
        now=now,
    )
    payment.update(response_status=201, response_body=b'{"paymentId":"pay_x"}' + b" " * 60)
    event = {
        "id": "",
        "merchant_id": DEMO_MERCHANT_ID,
        "store_id": DEMO_STORE_ID,
        "type": "subscription.renewed",
        # About the size of a renewal's events.
        "payload": b"x" * 420,
        "target_url": None,
        "delivery_state": "no_endpoint",
        "attempts": 0,
        "next_attempt_at": None,
        "created_at": now,
    }
    return claim, payment, event


def measure_floor(db_url: str, count: int) -> float:
    """ms per renewal of writing a renewal's rows with SQLAlchemy Core, batched."""
    SandboxRuntime(SandboxConfig(db_url=db_url, run_reconciler_in_background=False)).open().stop()
    seed(db_url, count)
    claim, payment, event = _floor_rows(db_url)
    engine = sa.create_engine(db_url)
    try:
        with engine.connect() as conn:
            ids = [
                str(i)
                for i in conn.execute(
                    sa.select(subscriptions.c.id).order_by(subscriptions.c.seq)
                ).scalars()
            ]
        update = (
            sa.update(subscriptions)
            .where(subscriptions.c.id == sa.bindparam("b_id"))
            .values(
                cycle_number=sa.bindparam("v_cycle"),
                periods=sa.bindparam("v_periods"),
                next_charge_at=sa.bindparam("v_next"),
            )
        )
        elapsed = 0.0
        for start in range(0, count, FLOOR_BATCH):
            batch = ids[start : start + FLOOR_BATCH]
            claims, pays, evts, updates = [], [], [], []
            for sub_id in batch:
                transaction_id = f"renewal {sub_id} 1"
                payment_id = f"pay_{uuid.uuid4().hex}"
                claims.append(
                    {
                        **claim,
                        "subscription_id": sub_id,
                        "transaction_id": transaction_id,
                        "payment_id": payment_id,
                    }
                )
                pay = copy.copy(payment)
                pay.update(id=payment_id, transaction_id=transaction_id)
                pays.append(pay)
                evts.append({**event, "id": f"evt_{uuid.uuid4().hex}"})
                evts.append({**event, "id": f"evt_{uuid.uuid4().hex}"})
                updates.append(
                    {
                        "b_id": sub_id,
                        "v_cycle": 1,
                        "v_periods": 2,
                        "v_next": claim["due_at"] + timedelta(days=60),
                    }
                )
            started = time.perf_counter()
            with engine.begin() as conn:
                conn.execute(sa.insert(subscription_charges), claims)
                conn.execute(sa.insert(payments), pays)
                conn.execute(sa.insert(events), evts)
                conn.execute(update, updates)
            elapsed += time.perf_counter() - started
    finally:
        engine.dispose()
    return elapsed / count * 1e3


@contextlib.contextmanager
def database(backend: str, folder: Path, name: str) -> Iterator[str]:
    if backend == "sqlite":
        yield f"sqlite:///{folder / f'{name}.db'}"
        return
    with _servers.postgres_database() as url:
        yield url


def run(backend: str, count: int, listing: bool) -> Result:
    workers = 1 if backend == "sqlite" else 2
    with tempfile.TemporaryDirectory(prefix="bench-subs-") as tmp:
        folder = Path(tmp)
        with database(backend, folder, "sandbox") as url:
            result = measure_sandbox(url, count, workers, listing)
        with database(backend, folder, "floor") as url:
            result.floor_ms = measure_floor(url, count)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000, 10_000, 100_000])
    parser.add_argument(
        "--backends", nargs="+", choices=("sqlite", "postgres"), default=["sqlite", "postgres"]
    )
    parser.add_argument("--no-list", action="store_true", help="leave the listing out")
    args = parser.parse_args()
    sizes = sorted(args.sizes)
    print(
        f"{'backend':<22} {'subscriptions':>13} {'renew ms':>9} {'floor ms':>9} "
        f"{'ratio':>6} {'RSS +MB':>8} {'anon +MB':>9} {'list µs/item':>12} {'seed s':>7}",
        flush=True,
    )
    for backend in args.backends:
        label = "sqlite, 1 worker" if backend == "sqlite" else "postgres, 2 workers"
        if backend == "postgres":
            try:
                with _servers.postgres_database():
                    pass
            except RuntimeError as exc:  # no PostgreSQL here: say so, go on
                print(f"{label:<22} left out ({exc})", flush=True)
                continue
        results: dict[int, Result] = {}
        for size in sizes:
            results[size] = r = run(backend, size, not args.no_list)
            listed = f"{r.list_us:>12.1f}" if r.list_us is not None else f"{'-':>12}"
            print(
                f"{label:<22} {size:>13,} {r.renew_ms:>9.3f} {r.floor_ms:>9.3f} "
                f"{r.renew_ms / r.floor_ms:>6.1f} {r.rss_growth_mb:>8.1f} "
                f"{r.anon_growth_mb:>9.1f} {listed} "
                f"{r.seed_s:>7.1f}",
                flush=True,
            )
        if len(results) >= 2:
            small, large = min(results), max(results)
            linear = results[large].renew_ms / results[small].renew_ms
            print(f"{label}: ms per renewal {large:,} / {small:,}: {linear:.2f}", flush=True)


if __name__ == "__main__":
    main()
