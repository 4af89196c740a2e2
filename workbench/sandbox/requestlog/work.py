"""The request log's queue and writer: off the request's path, bounded, in batches.

The story of one exchange:

1. The edge (`workbench.sandbox.edge.exchange_log`) hands it to `RequestQueue.record`
   once its answer has gone: an append to an in-memory queue, nothing else. When the
   queue holds `RequestQueue.capacity` exchanges (the writer is behind: overload, a
   slow database), the exchange is dropped and counted (`RequestQueue.dropped`): a
   request is never slowed, or failed, for its log.
2. `RequestLogWork`, a thread of its own, wakes every ``interval`` seconds (sooner when
   a batch is waiting), takes what is queued, redacts and shapes it
   (`workbench.sandbox.requestlog.records`), finds the merchant of a signature refusal
   from its key, and inserts the batch in one transaction; once it has written a
   quarter of ``keep`` rows of a merchant since it last trimmed that merchant, the same
   transaction trims the merchant to its newest ``keep`` (`workbench.sandbox.
   requestlog.store`). Deleting a few hundred rows at once costs about what deleting a
   hundred does (the statement's own cost dominates), and trimming at every batch cost
   the charge benchmark's sandbox half its throughput; the reads show the newest
   ``keep`` whatever the table holds beyond them.
3. A batch that fails to write is dropped and counted (`RequestLogWork.failed`), never
   retried: the log is a window on the traffic, not a ledger.
4. The thread writes at most `MAX_RATE` exchanges a second (a second's worth at once at
   most); under a heavier load the rest are dropped and counted (`RequestQueue.dropped`)
   rather than let the writer take the serving thread's time: measured on the charge
   benchmark, writing every exchange at 1,900 charges a second took 30% of them.

Each process has its own queue and writer; the table is shared, so on PostgreSQL every
worker's log is every worker's.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING

from workbench.sandbox.exchanges import Exchange
from workbench.sandbox.keys import look_up
from workbench.sandbox.merchant_secrets import open_secret_key
from workbench.sandbox.requestlog.diagnosis import SIGNATURE_CODES
from workbench.sandbox.requestlog.records import Signer, envelope_code, row_of
from workbench.sandbox.requestlog.store import insert_rows, trim

if TYPE_CHECKING:
    from workbench.sandbox.sealing import Sealer
    from workbench.sandbox.storage import Database

__all__ = ["DEFAULT_QUEUE_CAPACITY", "RequestLogWork", "RequestQueue"]

_log = logging.getLogger(__name__)

#: Exchanges a process holds before dropping new ones (a few MB at most).
DEFAULT_QUEUE_CAPACITY = 5_000
#: Exchanges the writer's thread writes a second at most (`drain` writes all).
MAX_RATE = 500
#: Exchanges written in one transaction at most.
BATCH = 100


class RequestQueue:
    """The edge's sink: exchanges waiting for the writer, bounded.

    Args:
        capacity: how many may wait; beyond, new ones are dropped and counted.
        batch: how many waiting wake the writer before its interval ends.
    """

    def __init__(self, capacity: int = DEFAULT_QUEUE_CAPACITY, batch: int = BATCH) -> None:
        self.capacity = capacity
        self._waiting: deque[Exchange] = deque()
        self._batch = batch
        #: Set when a batch is waiting, for the writer.
        self.wake = threading.Event()
        #: Exchanges dropped because the queue was full.
        self.dropped = 0

    def __len__(self) -> int:
        return len(self._waiting)

    def record(self, exchange: Exchange) -> None:
        """Queue ``exchange``, or drop it (counted) when the queue is full. Never blocks."""
        waiting = self._waiting
        if len(waiting) >= self.capacity:
            self.dropped += 1
            return
        waiting.append(exchange)
        if len(waiting) == self._batch:
            self.wake.set()

    def take(self, most: int) -> list[Exchange]:
        """Up to ``most`` of the oldest waiting exchanges, removed from the queue."""
        waiting = self._waiting
        out: list[Exchange] = []
        while waiting and len(out) < most:
            out.append(waiting.popleft())
        return out


class RequestLogWork:
    """Writes the queued exchanges to the database, in batches, on a thread of its own.

    Args:
        db: the sandbox database.
        queue: where the edge leaves the exchanges.
        keep: how many requests each merchant's log keeps (the newest).
        sealer: opens a key's secret, to diagnose a signature refusal.
        interval: seconds between two passes when no batch is waiting.
        on_written: called (on the writer's thread) with the merchants whose log grew,
            after each batch is committed (the dashboard's live updates).
    """

    def __init__(
        self,
        db: Database,
        queue: RequestQueue,
        *,
        keep: int,
        sealer: Sealer,
        interval: float = 0.2,
        on_written: Callable[[set[str]], None] | None = None,
    ) -> None:
        self.db = db
        self.queue = queue
        self.keep = keep
        self.sealer = sealer
        self.interval = interval
        self.on_written = on_written
        #: Rows of a merchant written since this writer last trimmed it.
        self._since_trim: dict[str, int] = {}
        #: How many such rows make a trim due.
        self.trim_every = max(keep // 4, 1)
        #: Exchanges lost because their batch failed to write.
        self.failed = 0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        # One pass at a time: the thread's, or a `drain` called from elsewhere.
        self._pass = threading.Lock()
        #: Exchanges the thread may write now (refilled at `max_rate` a second).
        self.max_rate = MAX_RATE
        self._allowance = float(MAX_RATE)
        self._last = time.monotonic()

    def start(self) -> None:
        """Start the writer's thread (once)."""
        if self._thread is not None:
            return
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, name="request-log", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Write what is queued, then stop the thread."""
        thread, self._thread = self._thread, None
        if thread is None:
            return
        self._stop.set()
        self.queue.wake.set()
        thread.join()
        self.drain()

    def _run(self) -> None:
        while not self._stop.is_set():
            self.queue.wake.wait(self.interval)
            self.queue.wake.clear()
            self._budgeted_pass()

    def _budgeted_pass(self) -> None:
        """Write what the rate allows of what is queued; drop (and count) the rest."""
        now = time.monotonic()
        self._allowance = min(
            float(self.max_rate), self._allowance + (now - self._last) * self.max_rate
        )
        self._last = now
        with self._pass:
            allowed = min(len(self.queue), int(self._allowance))
            self._allowance -= allowed
            while allowed > 0:
                batch = self.queue.take(min(BATCH, allowed))
                if not batch:
                    break
                allowed -= len(batch)
                self._write(batch)
            if self._allowance < 1:  # over the rate: what is still queued is dropped
                self.queue.dropped += len(self.queue.take(len(self.queue)))

    def drain(self) -> int:
        """Write everything queued now, on the calling thread; how many were written."""
        written = 0
        with self._pass:
            while True:
                batch = self.queue.take(BATCH)
                if not batch:
                    return written
                written += self._write(batch)

    def _write(self, batch: list[Exchange]) -> int:
        try:
            rows = self._rows(batch)
            merchants = {str(row["merchant_id"]) for row in rows}
            if not rows:
                return 0
            counts = self._since_trim
            for row in rows:
                merchant = str(row["merchant_id"])
                counts[merchant] = counts.get(merchant, 0) + 1
            due = {m for m in merchants if counts[m] >= self.trim_every}
            with self.db.write() as conn:
                written = insert_rows(conn, rows)
                trim(conn, due, self.keep)
            for merchant in due:
                counts[merchant] = 0
        except Exception as exc:  # a lost batch must never stop the writer
            self.failed += len(batch)
            _log.warning("request log: a batch of %d was not written (%s)", len(batch), type(exc))
            return 0
        if self.on_written is not None and merchants:
            self.on_written(merchants)
        return written

    def _rows(self, batch: list[Exchange]) -> list[dict[str, object]]:
        signers: dict[str, Signer | None] = {}
        rows = []
        for exchange in batch:
            # Let the event loop's thread have the interpreter between two rows: otherwise
            # it waits for this one's switch interval (5 ms) at every wake-up.
            time.sleep(0)
            if exchange.merchant_id is not None:
                rows.append(row_of(exchange, exchange.merchant_id, None))
                continue
            # Refused before it had a caller: only a signature refusal of a known key is
            # the key's merchant's (SVC-GW-1003, an unknown key, belongs to nobody).
            code, _ = envelope_code(exchange.response_body)
            if code not in SIGNATURE_CODES:
                continue
            if exchange.api_key not in signers:
                signers[exchange.api_key] = self._signer(exchange.api_key)
            signer = signers[exchange.api_key]
            if signer is not None:
                rows.append(row_of(exchange, signer.merchant_id, signer))
        return rows

    def _signer(self, api_key: str) -> Signer | None:
        record = look_up(self.db, api_key)
        if record is None:
            return None
        secret = open_secret_key(self.sealer, record.api_key, record.secret_key)
        return Signer(record.merchant_id, secret)
