"""Storage: the engine and its transactions, statements, write grouping, the schema's life.

Every feature imports what it needs from here; nothing here imports a feature (the
tables a database holds are given to `migrations` by the composition root).

- `database`: `Database`, whose ``read``/``write``/``transact`` serve threads and
  ``aread``/``atransact`` async code, each handed to its backend;
- `backends`: `Backend`, what the two servers do differently behind one interface, and
  its two: `sqlite` (`SQLiteBackend`: a file in WAL mode or in memory, ``BEGIN
  IMMEDIATE`` under the write lock) and `postgres` (`PostgresBackend`: the pool per
  worker, autocommit reads, pipelined and unlocked writes, batches);
- `plans`: `ReadPlan`, the reads a write transaction will make, declared once: the
  plan announces them (on PostgreSQL they travel with the transaction's first
  statement) and runs them, in order;
- `deferred`: `insert_later`, an INSERT sent as late as allowed, handing back its row
  (`insert_unread`: the same without the row, for one nobody reads back);
- `statements`: what the two above run on, behind them: statements run on the DB-API
  cursor, PostgreSQL's pipelined and unlocked transactions, and batches of them
  (``together``). Features write plain SQLAlchemy (``conn.execute``) and never import it;
- `composed`: PostgreSQL's statements made of several (reads side by side, INSERTs as
  CTEs), composed as SQLAlchemy constructs and compiled once per shape;
- `groups`: `TransactionGroup`, one SQLite transaction shared by several writes;
- `loopwrites` (SQLite) and `loopbatches` (PostgreSQL): an event loop's writes
  grouped per loop turn, or batched;
- `writelock`: the SQLite file's write lock, across threads and processes;
- `migrations`: the schema version, the steps that bring a database up to date, reset;
- `registry`: the one `MetaData` and storage's ``meta`` table; `types`: column types;
- `inserts` and `buckets`: what the two backends say differently, said once for
  both (an INSERT that keeps an existing row; a token bucket's take), so that no
  feature asks which backend it runs on.
"""

from __future__ import annotations

from workbench.sandbox.storage.buckets import take_token
from workbench.sandbox.storage.database import (
    PING_AFTER_IDLE_SECONDS,
    Database,
    is_memory_url,
    pool_settings,
)
from workbench.sandbox.storage.deferred import (
    insert_later,
    insert_lock_row,
    insert_unread,
    row_like,
)
from workbench.sandbox.storage.groups import TransactionGroup
from workbench.sandbox.storage.inserts import insert_if_absent
from workbench.sandbox.storage.loopbatches import LoopBatches
from workbench.sandbox.storage.loopwrites import LoopWrites
from workbench.sandbox.storage.migrations import SchemaVersionError
from workbench.sandbox.storage.plans import PlannedRead, ReadOutOfPlan, ReadPlan
from workbench.sandbox.storage.registry import meta, metadata
from workbench.sandbox.storage.types import AnyRow, UTCDateTime
from workbench.sandbox.storage.writelock import WriteLock

__all__ = [
    "PING_AFTER_IDLE_SECONDS",
    "AnyRow",
    "Database",
    "LoopBatches",
    "LoopWrites",
    "PlannedRead",
    "ReadOutOfPlan",
    "ReadPlan",
    "SchemaVersionError",
    "TransactionGroup",
    "UTCDateTime",
    "WriteLock",
    "insert_if_absent",
    "insert_later",
    "insert_lock_row",
    "insert_unread",
    "is_memory_url",
    "meta",
    "metadata",
    "pool_settings",
    "row_like",
    "take_token",
]
