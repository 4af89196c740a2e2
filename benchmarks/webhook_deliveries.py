"""Webhook deliveries at scale: the sandbox's delivery beside a bare httpx2 loop.

N events (default 10,000; ``--events 100000`` for a month-end's worth) are queued on
the demo merchant of a fresh database, ``--per-object`` of them about each payment
(interleaved, so one object's events are far apart in the queue), all to one local
receiver: a small asyncio HTTP/1.1 server in a process of its own that answers 204 and
counts what arrives and the most connections it held at once. Then, in the same run:

1. a bare loop: ``--connections`` tasks on one ``httpx2.AsyncClient`` limited to that
   many connections post the same bodies to the same receiver, unsigned;
2. the sandbox: reconciler passes (``SandboxRuntime.tick``) until nothing is pending,
   with ``webhook_concurrency`` and ``webhook_connections_per_target`` at
   ``--connections``: each event claimed, signed, posted, its outcome recorded.

Prints deliveries per second for both, their ratio, the most connections the receiver
saw for each, and whether every object's events arrived in the order they were made,
each exactly once. Run: ``uv run python -m benchmarks.webhook_deliveries [--events
100000] [--backend postgresql]``. Not run by the tests.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import multiprocessing
import socket
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import httpx2
import sqlalchemy as sa

from benchmarks._servers import postgres_database
from workbench.sandbox import DEMO_MERCHANT_ID, DEMO_STORE_ID, SandboxConfig, events, tables
from workbench.sandbox.clock import business_now
from workbench.sandbox.runtime import SandboxRuntime
from workbench.spec.events import PaymentCapturedData


class _Receiver(asyncio.Protocol):
    """One connection: answers each POST 204 (keep-alive), ``GET /stats`` with the counts.

    Connections are counted from the first event they carry, and only those made since
    the last ``POST /reset``: the counting client's own, or the last phase's closing
    ones, are not the next phase's.
    """

    stats: ClassVar[dict[str, Any]] = {"open": 0, "most_open": 0, "ids": [], "epoch": 0}

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport: asyncio.Transport = transport  # type: ignore[assignment]
        self.buffer = b""
        self.epoch = self.stats["epoch"]
        self.counted = False

    def connection_lost(self, exc: Exception | None) -> None:
        if self.counted and self.epoch == self.stats["epoch"]:
            self.stats["open"] -= 1

    def _count(self) -> None:
        stats = self.stats
        if not self.counted and self.epoch == stats["epoch"]:
            self.counted = True
            stats["open"] += 1
            stats["most_open"] = max(stats["most_open"], stats["open"])

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        while True:
            end = self.buffer.find(b"\r\n\r\n")
            if end < 0:
                return
            head = self.buffer[:end].decode("latin-1").split("\r\n")
            fields = {
                name.strip().lower(): value.strip()
                for name, _, value in (line.partition(":") for line in head[1:])
            }
            size = int(fields.get("content-length", "0"))
            if len(self.buffer) < end + 4 + size:
                return
            self.buffer = self.buffer[end + 4 + size :]
            if head[0].startswith("GET /stats"):
                self._stats()
            elif head[0].startswith("POST /reset"):
                epoch = self.stats["epoch"] + 1
                self.stats.update(open=0, most_open=0, ids=[], epoch=epoch)
                self.transport.write(b"HTTP/1.1 204 No Content\r\n\r\n")
            else:
                self._count()
                self.stats["ids"].append(fields.get("x-event-id", ""))
                self.transport.write(b"HTTP/1.1 204 No Content\r\n\r\n")

    def _stats(self) -> None:
        body = json.dumps(self.stats).encode()
        self.transport.write(
            b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
            b"Content-Length: %d\r\n\r\n%s" % (len(body), body)
        )


def _receive(sock: socket.socket) -> None:
    async def serve() -> None:
        server = await asyncio.get_running_loop().create_server(_Receiver, sock=sock)
        await server.serve_forever()

    asyncio.run(serve())


@contextlib.contextmanager
def receiver() -> Iterator[str]:
    """The receiver in a process of its own; yields its base URL."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.bind(("127.0.0.1", 0))
    sock.listen(512)
    port = sock.getsockname()[1]
    proc = multiprocessing.get_context("fork").Process(target=_receive, args=(sock,))
    proc.start()
    sock.close()
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.terminate()
        proc.join(10)


def stats(base: str, *, reset: bool = False) -> dict[str, Any]:
    """What the receiver counted (and, with ``reset``, a fresh count from now on)."""
    with httpx2.Client(base_url=base, timeout=60) as client:
        found: dict[str, Any] = client.get("/stats").json()
        if reset:
            client.post("/reset")
    return found


def populate(runtime: SandboxRuntime, count: int, per_object: int, url: str) -> dict[str, str]:
    """``count`` pending events to ``url``; returns each one's object (its payment)."""
    objects = max(1, count // per_object)
    made: dict[str, str] = {}
    with runtime.db.write() as conn:
        now = business_now(conn, DEMO_MERCHANT_ID)
        for n in range(count):
            payment = f"pay_bench{n % objects:015d}"
            event_id = events.emit(
                conn,
                merchant_id=DEMO_MERCHANT_ID,
                store_id=DEMO_STORE_ID,
                data=PaymentCapturedData(
                    payment_id=payment,
                    transaction_id=f"order-{n}",
                    status="captured",
                    amount=10_000 + n,
                    currency="TRY",
                ),
                now=now,
                target_url=url,
            )
            made[event_id] = payment
    return made


async def bare_loop(url: str, bodies: list[bytes], connections: int) -> float:
    """Seconds to post every body with ``connections`` tasks on one limited client."""
    limits = httpx2.Limits(max_connections=connections, max_keepalive_connections=connections)
    queue = iter(bodies)
    async with httpx2.AsyncClient(limits=limits, timeout=60) as client:

        async def worker() -> None:
            for body in queue:
                response = await client.post(
                    url, content=body, headers={"Content-Type": "application/json"}
                )
                assert response.status_code == 204, response.status_code

        started = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(connections)))
        return time.perf_counter() - started


def deliver(runtime: SandboxRuntime) -> float:
    """Seconds of reconciler passes until no event is pending."""
    e = tables.events
    pending = sa.select(sa.func.count()).select_from(e).where(e.c.delivery_state == "pending")
    started = time.perf_counter()
    while True:
        runtime.tick(DEMO_MERCHANT_ID)
        with runtime.db.read() as conn:
            if conn.execute(pending).scalar_one() == 0:
                return time.perf_counter() - started


def in_order(arrived: list[str], objects: dict[str, str]) -> bool:
    """Whether each event arrived once and each object's in the order they were made
    (``objects`` is in that order)."""
    if sorted(arrived) != sorted(objects):
        return False
    rank = {event_id: n for n, event_id in enumerate(objects)}
    last: dict[str, int] = {}
    for event_id in arrived:
        obj = objects[event_id]
        if last.get(obj, -1) > rank[event_id]:
            return False
        last[obj] = rank[event_id]
    return True


@contextlib.contextmanager
def database(backend: str) -> Iterator[str]:
    if backend == "postgresql":
        with postgres_database() as url:
            yield url
        return
    with tempfile.TemporaryDirectory() as tmp:
        yield f"sqlite:///{Path(tmp) / 'bench.db'}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=10_000, help="events queued")
    parser.add_argument("--per-object", type=int, default=4, help="events about each payment")
    parser.add_argument("--connections", type=int, default=8, help="connections to the target")
    parser.add_argument("--backend", choices=["sqlite", "postgresql"], default="sqlite")
    args = parser.parse_args()
    with receiver() as base, database(args.backend) as db_url:
        runtime = SandboxRuntime(
            SandboxConfig(
                db_url=db_url,
                run_reconciler_in_background=False,
                webhook_concurrency=args.connections,
                webhook_connections_per_target=args.connections,
            )
        )
        runtime.start()  # as a server does: WAL checkpoints; passes run by `deliver` here
        try:
            url = f"{base}/hooks"
            made = populate(runtime, args.events, args.per_object, url)
            with runtime.db.read() as conn:
                bodies = [
                    bytes(payload)
                    for payload in conn.execute(
                        sa.select(tables.events.c.payload).order_by(tables.events.c.seq)
                    ).scalars()
                ]
            stats(base, reset=True)
            bare = asyncio.run(bare_loop(url, bodies, args.connections))
            bare_seen = stats(base, reset=True)
            sandbox = deliver(runtime)
            sandbox_seen = stats(base)
        finally:
            runtime.stop()
    count = args.events
    print(
        f"{count:,} events, {args.per_object} per object, {args.connections} connections, "
        f"{args.backend} (shared machine: noisy; the ratio is what counts)"
    )
    print(f"{'':>10} {'deliveries/s':>13} {'most connections':>17}")
    print(f"{'bare':>10} {count / bare:>13,.0f} {bare_seen['most_open']:>17}")
    print(f"{'sandbox':>10} {count / sandbox:>13,.0f} {sandbox_seen['most_open']:>17}")
    print(f"ratio sandbox / bare: {bare / sandbox:.2f}")
    print(f"bare posts arrived: {len(bare_seen['ids']):,}")
    print(f"every event once, each object's in order: {in_order(sandbox_seen['ids'], made)}")


if __name__ == "__main__":
    main()
