"""Hot-path statements: SQLAlchemy Core compiled once per dialect, run on the DB-API cursor.

SQLAlchemy's ``Connection.execute`` costs 50-100 µs per statement even when the
compiled form is cached (execution context, events, result wrapping); the card
charge runs ten statements, so that alone capped the sandbox near 1,000 charges a
second of pure database time. The statements stay Core expressions (one source of
SQL for SQLite and PostgreSQL); only their execution is lean: parameters go through
each column type's own bind processor, results through its result processor, and
driver errors come back as SQLAlchemy's exception classes, inside the caller's
transaction.

On PostgreSQL each statement would also be a round trip of its own (``BEGIN``
included), so inside a `workbench.sandbox.storage.database.Database.write` transaction three things
travel together in psycopg's pipeline mode, in the order they were asked for:

* the transaction's first statement goes with its ``BEGIN`` and with the reads the
  caller announced with `reading_ahead`; their rows wait, each for its one use, and are
  dropped as soon as the transaction writes anything;
* a statement given to `defer` (an INSERT whose outcome nothing reads back) goes with
  the next statement, or with the ``COMMIT`` (`finish`); a constraint it breaks is
  raised from there, as the same SQLAlchemy exception, before anything is committed.

A transaction whose reads were announced may first be tried *unlocked*
(``Database.write(unlocked=True)``, which ``Database.transact`` does): its announced reads
go to the server as one statement, outside any transaction, and its INSERTs as one
statement too (``WITH ... AS (INSERT ...) INSERT ...``), which commits them together or
not at all: two statements, no ``BEGIN``, no ``COMMIT``, no pipeline. That is the same
transaction as the locked one as long as its ``FOR UPDATE`` reads find nothing (then
they lock nothing either, and a concurrent insert of the same key still fails the
INSERT on the unique index, as it would the locked one's) and it writes nothing but
INSERTs: anything else (such a read finding a row, a read not announced, a read after
a write, an UPDATE) raises `LocksNeeded` before anything was written, and the caller
runs the work again, locked.

Unlocked transactions asked for together go further with `together`: one statement
reads for all of them, one makes all their INSERTs (`workbench.sandbox.storage.loopbatches`).

On SQLite nothing changes: every statement runs when it is asked for.
"""

from __future__ import annotations

import collections
import contextvars
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine.interfaces import Dialect

from workbench.sandbox.storage import composed

__all__ = [
    "LocksNeeded",
    "Outcome",
    "Transaction",
    "announced",
    "autocommit",
    "close_transaction",
    "defer",
    "execute",
    "fetch_all",
    "fetch_one",
    "finish",
    "flush",
    "open_transaction",
    "reading_ahead",
    "scalar",
    "together",
    "transaction_of",
]

_Processor = Callable[[Any], Any] | None
#: What this module runs.
Statement = sa.Select[Any] | sa.Insert | sa.Update | sa.Delete


def _result_processor(column: Any, dialect: Dialect) -> _Processor:
    impl = column.type.dialect_impl(dialect)
    if isinstance(impl, sa.Float) and not impl.asdecimal:
        return None  # both drivers give a float already (PostgreSQL's wants the type oid)
    processor: _Processor = impl.result_processor(dialect, None)
    return processor


class _Prepared:
    """One statement compiled for one dialect (and, for an INSERT, one set of keys)."""

    __slots__ = (
        "_converts",
        "_defaults",
        "_positional",
        "_processed",
        "_record",
        "_results",
        "bind_names",
        "locks",
        "names",
        "sql",
        "statement",
    )

    def __init__(self, statement: Statement, dialect: Dialect, keys: Sequence[str] | None):
        # Held so the statement outlives its cache entry: the cache is keyed by id().
        self.statement = statement
        compiled = statement.compile(
            dialect=dialect, column_keys=list(keys) if keys is not None else None
        )
        self.sql = compiled.string
        #: The name each bind parameter got (`composed` renames them after it).
        self.bind_names = compiled.bind_names
        #: Whether it locks the rows it reads (``SELECT ... FOR UPDATE``).
        self.locks = getattr(statement, "_for_update_arg", None) is not None
        self._positional = bool(compiled.positional)
        names = list(compiled.positiontup or ()) if self._positional else list(compiled.binds)
        table_defaults: dict[str, Any] = {}
        if isinstance(statement, sa.Insert):
            table = statement.table
            for column in getattr(table, "columns", ()):
                if column.default is not None and column.default.is_scalar:
                    table_defaults[column.key] = column.default.arg
        binds: list[tuple[str, Any, _Processor]] = []
        for name in names:
            bind = compiled.binds[name]
            default = None if bind.required else bind.effective_value
            if default is None:
                default = table_defaults.get(name)
            processor = bind.type.dialect_impl(dialect).bind_processor(dialect)
            binds.append((name, default, processor))
        #: The parameter names, in the order the driver is given them.
        self.names = tuple(name for name, _, _ in binds)
        self._defaults = tuple(default for _, default, _ in binds)
        self._processed = [
            (index, processor)
            for index, (_, _, processor) in enumerate(binds)
            if processor is not None
        ]
        columns = list(getattr(statement, "exported_columns", None) or ())
        self._results: list[_Processor] = [_result_processor(column, dialect) for column in columns]
        #: The result columns that have a processor, and it.
        self._converts = [
            (index, processor)
            for index, processor in enumerate(self._results)
            if processor is not None
        ]
        fields: list[str] = [
            str(getattr(column, "key", None) or getattr(column, "name", "")) for column in columns
        ]
        self._record: Any = (
            collections.namedtuple("Record", fields, rename=True) if fields else None
        )

    def parameters(self, params: Mapping[str, Any]) -> tuple[Any, ...] | dict[str, Any]:
        # map() over the bound ``get`` gathers the values in C (a Python loop over an
        # INSERT's thirty-odd columns was a tenth of a charge's work).
        values = list(map(params.get, self.names, self._defaults))
        for index, processor in self._processed:
            value = values[index]
            if value is not None:
                values[index] = processor(value)
        if self._positional:
            return tuple(values)
        return dict(zip(self.names, values, strict=True))

    @property
    def width(self) -> int:
        """How many columns a row of its result has."""
        return len(self._results)

    def record(self, row: Sequence[Any]) -> Any:
        assert self._record is not None
        if not self._converts:
            return self._record._make(row)
        # Only the columns that have a processor (as `parameters` does): a generator over
        # every column cost a Python step per column of every row read.
        values = list(row)
        for index, processor in self._converts:
            value = values[index]
            if value is not None:
                values[index] = processor(value)
        return self._record._make(values)


_cache: dict[tuple[int, str, tuple[str, ...] | None], _Prepared] = {}
_cache_lock = threading.Lock()


def _prepared(conn: sa.Connection, statement: Statement, keys: tuple[str, ...] | None) -> _Prepared:
    dialect = conn.dialect
    # Keyed by id(): each entry holds its statement, so no live entry's id is reused.
    # Hot-path statements are module constants; anything else still costs one entry.
    cache_key = (id(statement), dialect.name, keys)
    prepared = _cache.get(cache_key)
    if prepared is None:
        with _cache_lock:
            prepared = _cache.setdefault(cache_key, _Prepared(statement, dialect, keys))
    return prepared


def _prepared_for(
    conn: sa.Connection, statement: Statement, params: Mapping[str, Any]
) -> _Prepared:
    """`_prepared`, an INSERT compiled for the keys of ``params``.

    In the values' own order, not sorted: a call site builds its values the same way
    every time, and the parameters are bound by name whatever the order.
    """
    keys = tuple(params) if isinstance(statement, sa.Insert) else None
    return _prepared(conn, statement, keys)


#: A statement ready for the driver: its SQL and its processed parameters.
_Sent = tuple[str, Any]
#: A statement queued (`defer`): its compiled form and its processed parameters.
_Queued = tuple["_Prepared", Any]
#: What `reading_ahead` announced: statements and their parameters.
_Reads = tuple[tuple["Statement", Mapping[str, Any]], ...]
_ahead: contextvars.ContextVar[_Reads] = contextvars.ContextVar("reading_ahead", default=())
#: A read's identity: its statement and its parameters.
_ReadKey = tuple[int, tuple[tuple[str, Any], ...]]
#: Where a write transaction's `Transaction` is kept, in the connection's ``info``.
_INFO_KEY = "workbench_transaction"
#: No transaction open on the driver connection: ``psycopg.pq.TransactionStatus.IDLE``
#: (an IntEnum), by value, since a sandbox on SQLite runs without psycopg installed.
_IDLE = 0
_BEGIN: tuple[str, Any] = ("BEGIN", None)


class LocksNeeded(Exception):
    """An unlocked transaction met what only a locked one may do; nothing was written."""


class Transaction:
    """What a PostgreSQL write transaction has queued and read ahead (see the module doc).

    `Database.write` opens one per transaction (`open_transaction`;
    `transaction_of` finds it), commits with `finish` and closes it (`close_transaction`)
    whatever happened. The driver connection is in autocommit mode meanwhile and the
    ``BEGIN`` is sent here, with the first statement: psycopg would send its own and
    wait for the answer before anything else. An unlocked one never sends ``BEGIN``.
    """

    __slots__ = ("begun", "deferred", "own_begin", "read_ahead", "sent", "unlocked")

    def __init__(self, *, own_begin: bool, unlocked: bool = False) -> None:
        #: Whether ``BEGIN`` is ours to send (else psycopg sends it).
        self.own_begin = own_begin
        #: Whether this is an unlocked attempt (see the module doc).
        self.unlocked = unlocked and own_begin
        #: Whether the transaction has begun on the server (unlocked: read its reads).
        self.begun = not own_begin
        #: Statements waiting to go with the next one or the COMMIT.
        self.deferred: list[_Queued] = []
        #: Rows read ahead, by (statement id, parameters), each for one use.
        self.read_ahead: dict[_ReadKey, list[Any] | None] = {}
        #: Statements sent to the server, BEGIN and COMMIT included.
        self.sent = 0

    def take(self, raw: Any) -> list[_Sent]:
        """What must go before the next statement: BEGIN if the driver connection ``raw``
        is not in a transaction (not yet, or someone committed it), then the queue."""
        # Each statement on its own, not joined into one: psycopg caches its parsing of
        # a statement of up to 50 parameters only, and parsing costs more than sending.
        idle = raw.info.transaction_status == _IDLE
        batch = [_BEGIN] if self.own_begin and (idle or not self.begun) else []
        self.begun = True
        batch.extend((prepared.sql, args) for prepared, args in self.deferred)
        self.deferred = []
        return batch

    def discard(self) -> None:
        """Forget everything queued and read ahead (the transaction is rolled back)."""
        self.deferred.clear()
        self.read_ahead.clear()


def transaction_of(conn: sa.Connection) -> Transaction | None:
    """The open PostgreSQL write transaction of ``conn``, if there is one."""
    if conn.dialect.name == "sqlite":  # never one: spared ``conn.info``'s three properties
        return None
    found: Transaction | None = conn.info.get(_INFO_KEY)
    return found


def open_transaction(conn: sa.Connection, *, unlocked: bool = False) -> Transaction:
    """Start a PostgreSQL write transaction on ``conn`` (`Database.write`); sends nothing.

    ``unlocked``: try it without a transaction on the server (see the module doc).
    """
    raw: Any = conn.connection.driver_connection
    own_begin = raw is not None and raw.info.transaction_status == _IDLE and not raw.autocommit
    if own_begin:
        raw.autocommit = True
    transaction = Transaction(own_begin=own_begin, unlocked=unlocked)
    conn.info[_INFO_KEY] = transaction
    return transaction


def close_transaction(conn: sa.Connection) -> None:
    """Stop tracking ``conn``'s write transaction, once it was committed or rolled back.

    The driver connection leaves autocommit mode again; one that is somehow still in a
    transaction is rolled back first, and one that cannot be is dropped from the pool.
    """
    transaction = conn.info.pop(_INFO_KEY, None)
    if transaction is None:
        return
    transaction.discard()
    raw = conn.connection.driver_connection
    if transaction.own_begin and raw is not None:
        _leave_autocommit(conn, raw)


def _leave_autocommit(conn: sa.Connection, raw: Any) -> None:
    """Take the driver connection out of autocommit mode, rolling back a transaction it is
    somehow still in; one that cannot be is dropped from the pool."""
    try:
        if raw.info.transaction_status != _IDLE:
            raw.rollback()
        raw.autocommit = False
    except conn.dialect.loaded_dbapi.Error:
        conn.invalidate()


@contextmanager
def autocommit(conn: sa.Connection) -> Iterator[None]:
    """Run ``conn``'s statements in the driver's autocommit mode (a PostgreSQL read).

    No ``BEGIN`` and ``COMMIT`` round trips; under READ COMMITTED a read transaction
    of several statements sees no more than they do one by one.
    """
    raw: Any = conn.connection.driver_connection
    raw.autocommit = True
    try:
        yield
    finally:
        _leave_autocommit(conn, raw)


def announced() -> bool:
    """Whether reads were announced (`reading_ahead`) for the transactions to come."""
    return bool(_ahead.get())


@contextmanager
def reading_ahead(*reads: tuple[Statement, Mapping[str, Any]]) -> Iterator[None]:
    """Announce reads the next write transactions will make (PostgreSQL: sent with BEGIN).

    Within this block (and the worker threads it starts), a transaction's first statement
    carries these with it in one round trip; a read made later with the same statement
    and parameters is answered from what came back, once, unless the transaction wrote
    something in between. Reads must be ones the transaction makes anyway and in the
    same order, locks (``FOR UPDATE``) included: they run earlier, not differently.
    """
    token = _ahead.set(reads)
    try:
        yield
    finally:
        _ahead.reset(token)


def _key(statement: Statement, params: Mapping[str, Any]) -> _ReadKey:
    return id(statement), tuple(sorted(params.items()))


def _execute_composed(
    conn: sa.Connection, raw: Any, statement: composed.Composed, args: Mapping[str, Any]
) -> Any:
    """Run a `composed.Composed` statement through psycopg's `RawCursor`, unparsed."""
    # Imported here: this runs on PostgreSQL only, and an SQLite sandbox runs without psycopg.
    import psycopg

    cursor = psycopg.RawCursor(raw)
    try:
        cursor.execute(statement.sql, statement.values(args))
    except conn.dialect.loaded_dbapi.Error as exc:
        cursor.close()
        raise _wrap(conn, statement.sql, args, exc) from exc
    return cursor


def _named(args: Any, prefix: str) -> dict[str, Any]:
    return {f"{prefix}{name}": value for name, value in args.items()}


def _read_unlocked(
    conn: sa.Connection, transaction: Transaction, first: tuple[Statement, Mapping[str, Any]]
) -> None:
    """Send the ``first`` read and the announced ones as one statement, outside a
    transaction; keep their rows for their one use each.

    Raises:
        LocksNeeded: a read that locks (``FOR UPDATE``) found a row, or one found several.
    """
    transaction.begun = True
    key = _key(*first)
    wanted = [first, *(read for read in _ahead.get() if _key(*read) != key)]
    reads = [(statement, params, _prepared(conn, statement, None)) for statement, params in wanted]
    args: dict[str, Any] = {}
    for i, (_, params, read) in enumerate(reads):
        args.update(_named(read.parameters(params), f"r{i}_"))
    raw = conn.connection.driver_connection
    together = composed.reads_as_one(tuple(read for _, _, read in reads), conn.dialect)
    cursor = _execute_composed(conn, raw, together, args)
    transaction.sent += 1
    try:
        rows = cursor.fetchall()
    finally:
        cursor.close()
    if len(rows) != 1:
        raise LocksNeeded("an announced read found more than one row")
    locked = _split_row(rows[0], 0, reads, transaction.read_ahead)
    if locked:
        raise LocksNeeded("a locking read found a row")


def _split_row(
    row: Sequence[Any],
    offset: int,
    reads: Sequence[tuple[Statement, Mapping[str, Any], _Prepared]],
    into: dict[_ReadKey, list[Any] | None],
) -> bool:
    """Each read's records from ``row`` (`composed.reads_as_one`'s columns, from ``offset``) into
    ``into``; whether a read that locks found a row."""
    locked = False
    for statement, params, read in reads:
        found, values = row[offset], row[offset + 1 : offset + 1 + read.width]
        offset += 1 + read.width
        locked = locked or (found is not None and read.locks)
        into[_key(statement, params)] = [] if found is None else [read.record(values)]
    return locked


def _wrap(conn: sa.Connection, sql: str, args: Any, exc: Exception) -> sa.exc.StatementError:
    return sa.exc.DBAPIError.instance(
        sql, args, exc, conn.dialect.loaded_dbapi.Error, dialect=conn.dialect
    )


def _send(conn: sa.Connection, raw: Any, batch: list[_Sent]) -> list[Any]:
    """Run ``batch`` in one round trip (psycopg's pipeline); one cursor per statement."""
    cursors = [raw.cursor() for _ in batch]
    current = batch[0]
    try:
        with raw.pipeline():
            for cursor, sent in zip(cursors, batch, strict=True):
                current = sent
                cursor.execute(*sent)
    except conn.dialect.loaded_dbapi.Error as exc:
        for cursor in cursors:
            cursor.close()
        raise _wrap(conn, current[0], current[1], exc) from exc
    return cursors


def _run_pg(
    conn: sa.Connection, transaction: Transaction, prepared: _Prepared, args: Any, raw: Any
) -> Any:
    first = not transaction.begun or raw.info.transaction_status == _IDLE
    batch = transaction.take(raw)
    batch.append((prepared.sql, args))
    ahead: list[tuple[Statement, Mapping[str, Any]]] = []
    if first:  # this statement begins the transaction: the announced reads go with it
        transaction.read_ahead.clear()
        ahead = [
            (statement, params)
            for statement, params in _ahead.get()
            if not (statement is prepared.statement and prepared.parameters(params) == args)
        ]
        for statement, params in ahead:
            read = _prepared(conn, statement, None)
            batch.append((read.sql, read.parameters(params)))
    transaction.sent += len(batch)
    if len(batch) == 1 and not first:
        return _execute(conn, raw, prepared.sql, args)
    cursors = _send(conn, raw, batch)
    mine = len(batch) - len(ahead) - 1
    for (statement, params), cursor in zip(ahead, cursors[mine + 1 :], strict=True):
        read = _prepared(conn, statement, None)
        rows = cursor.fetchall()  # a SELECT: rows, perhaps none
        cursor.close()
        transaction.read_ahead[_key(statement, params)] = (
            None if rows is None else [read.record(row) for row in rows]
        )
    for cursor in cursors[:mine]:
        cursor.close()
    return cursors[mine]


def _execute(conn: sa.Connection, raw: Any, sql: str, args: Any) -> Any:
    cursor = raw.cursor()
    try:
        cursor.execute(sql, args)
    except conn.dialect.loaded_dbapi.Error as exc:
        cursor.close()
        raise _wrap(conn, sql, args, exc) from exc
    return cursor


def _run(
    conn: sa.Connection,
    transaction: Transaction | None,
    prepared: _Prepared,
    params: Mapping[str, Any],
) -> Any:
    """Run ``prepared``; ``transaction`` is ``transaction_of(conn)``, looked up by the caller."""
    args = prepared.parameters(params)
    if conn.dialect.name == "sqlite":
        # pysqlite's driver connection is its DB-API connection, an attribute of the
        # pool's; ``driver_connection`` reaches it through two properties per statement.
        return _execute(conn, conn.connection.dbapi_connection, prepared.sql, args)
    raw = conn.connection.driver_connection
    assert raw is not None
    if transaction is not None and transaction.unlocked:
        raise LocksNeeded("a statement that was not announced, or a write that is no INSERT")
    if transaction is not None:
        if not isinstance(prepared.statement, sa.Select):
            transaction.read_ahead.clear()  # a write: rows read before may be stale
        return _run_pg(conn, transaction, prepared, args, raw)
    return _execute(conn, raw, prepared.sql, args)


def _from_read_ahead(
    conn: sa.Connection,
    transaction: Transaction,
    statement: Statement,
    params: Mapping[str, Any],
) -> Any:
    """The rows read ahead for this read, once, or ``False`` if none are waiting.

    An unlocked transaction's first read goes with the announced ones (`_read_unlocked`).
    """
    if transaction.unlocked and not transaction.begun and isinstance(statement, sa.Select):
        _read_unlocked(conn, transaction, (statement, params))
    if not transaction.read_ahead:
        return False
    return transaction.read_ahead.pop(_key(statement, params), False)


def defer(conn: sa.Connection, statement: Statement, params: Mapping[str, Any]) -> None:
    """Run an INSERT, UPDATE or DELETE whose row count nothing needs, as late as allowed.

    In a PostgreSQL write transaction it goes to the server with the next statement or
    the COMMIT (a broken constraint is raised from there); elsewhere it runs now.
    """
    transaction = transaction_of(conn)
    if transaction is None:
        prepared = _prepared_for(conn, statement, params)
        _run(conn, None, prepared, params).close()
        return
    if transaction.unlocked and not isinstance(statement, sa.Insert):
        raise LocksNeeded("an UPDATE or DELETE changes rows an unlocked read did not lock")
    prepared = _prepared_for(conn, statement, params)
    transaction.read_ahead.clear()
    transaction.deferred.append((prepared, prepared.parameters(params)))


def flush(conn: sa.Connection) -> None:
    """Before a statement run another way (``Connection.execute``): send ``BEGIN`` and
    what `defer` queued on ``conn`` now, and forget the rows read ahead."""
    transaction = transaction_of(conn)
    if transaction is None:
        return
    if transaction.unlocked:
        raise LocksNeeded("a statement run through SQLAlchemy")
    transaction.read_ahead.clear()
    raw = conn.connection.driver_connection
    in_transaction = raw is not None and raw.info.transaction_status != _IDLE
    if (
        transaction.begun
        and not transaction.deferred
        and (in_transaction or not transaction.own_begin)
    ):
        return
    batch = transaction.take(raw)
    transaction.sent += len(batch)
    for cursor in _send(conn, raw, batch):
        cursor.close()


def finish(conn: sa.Connection) -> None:
    """Commit ``conn``'s write transaction: what `defer` queued and the COMMIT, together.

    Afterwards the driver connection is idle, so SQLAlchemy's own commit sends nothing.
    """
    transaction = transaction_of(conn)
    raw = conn.connection.driver_connection
    if transaction is None or raw is None:
        return
    transaction.read_ahead.clear()
    if transaction.unlocked:
        _write_unlocked(conn, transaction, raw)
        return
    if not transaction.begun and not transaction.deferred:
        return  # nothing was sent: nothing to commit
    if transaction.begun and not transaction.deferred and raw.info.transaction_status == _IDLE:
        return
    batch = transaction.take(raw)
    batch.append(("COMMIT", None))
    transaction.sent += len(batch)
    for cursor in _send(conn, raw, batch):
        cursor.close()


def _write_unlocked(conn: sa.Connection, transaction: Transaction, raw: Any) -> None:
    """An unlocked transaction's INSERTs, as one statement: all of them or none."""
    deferred, transaction.deferred = transaction.deferred, []
    if not deferred:
        return
    statement, args = _all_inserts(conn, deferred)
    transaction.sent += 1
    _execute_composed(conn, raw, statement, args).close()


def _all_inserts(
    conn: sa.Connection, inserts: Sequence[_Queued]
) -> tuple[composed.Composed, dict[str, Any]]:
    """One statement (and its parameters) making all of ``inserts`` or none."""
    args: dict[str, Any] = {}
    for i, (_, each) in enumerate(inserts):
        args.update(_named(each, f"d{i}_"))
    parts = tuple(prepared for prepared, _ in inserts)
    return composed.inserts_as_one(parts, conn.dialect), args


def fetch_one(conn: sa.Connection, statement: Statement, params: Mapping[str, Any]) -> Any:
    """The first row of a SELECT (or an INSERT ... RETURNING), as a named tuple, or ``None``."""
    transaction = transaction_of(conn)
    if transaction is not None:
        rows = _from_read_ahead(conn, transaction, statement, params)
        if rows is not False:
            return rows[0] if rows else None
    prepared = _prepared_for(conn, statement, params)
    cursor = _run(conn, transaction, prepared, params)
    try:
        row = cursor.fetchone()
    finally:
        cursor.close()
    return None if row is None else prepared.record(row)


def fetch_all(conn: sa.Connection, statement: Statement, params: Mapping[str, Any]) -> list[Any]:
    """Every row of a SELECT, as named tuples."""
    transaction = transaction_of(conn)
    if transaction is not None:
        rows = _from_read_ahead(conn, transaction, statement, params)
        if rows is not False:
            return list(rows)
    prepared = _prepared(conn, statement, None)
    cursor = _run(conn, transaction, prepared, params)
    try:
        return [prepared.record(row) for row in cursor.fetchall()]
    finally:
        cursor.close()


def scalar(conn: sa.Connection, statement: Statement, params: Mapping[str, Any]) -> Any:
    """The first column of the first row, or ``None``."""
    row = fetch_one(conn, statement, params)
    return None if row is None else row[0]


def execute(conn: sa.Connection, statement: Statement, params: Mapping[str, Any]) -> int:
    """Run an INSERT, UPDATE or DELETE; returns the row count.

    An INSERT built without ``.values()`` is compiled for exactly the keys given.
    """
    prepared = _prepared_for(conn, statement, params)
    cursor = _run(conn, transaction_of(conn), prepared, params)
    try:
        return int(cursor.rowcount)
    finally:
        cursor.close()


#: A transaction's work, as `together` runs it: called with the shared connection.
Work = Callable[[sa.Connection], Any]


class Outcome:
    """What one transaction of `together` came to: a result, an error, or run it alone."""

    __slots__ = ("alone", "error", "result")

    def __init__(self) -> None:
        self.result: Any = None
        self.error: Exception | None = None
        #: It needs a transaction of its own (`LocksNeeded`, or the INSERTs lost a race).
        self.alone = False


def together(
    conn: sa.Connection, works: Sequence[tuple[Work, contextvars.Context]]
) -> list[Outcome]:
    """Run several unlocked transactions as one: their reads in one statement, then each
    transaction's work, then all their INSERTs in one statement (PostgreSQL).

    Each work runs in its own context (where its reads were announced, `reading_ahead`)
    on ``conn``, as it would unlocked on its own (see the module doc): reads answered from
    what came back, INSERTs queued. The INSERTs of every transaction that got that far
    are then made by one statement, so all of them are committed or none: two round
    trips for the lot, however many they are. A transaction that needed locks, and every
    one of them when that statement fails on a constraint (two of them made the same key,
    or a concurrent request did), comes back marked `Outcome.alone`, with nothing
    written, for the caller to run on its own.
    """
    outcomes = [Outcome() for _ in works]
    raw: Any = conn.connection.driver_connection
    ahead: list[dict[_ReadKey, list[Any] | None]] = [{} for _ in works]
    # Transactions reading alike (the same statements) share one statement: a row each.
    alike: dict[tuple[_Prepared, ...], list[int]] = {}
    reads: list[list[tuple[Statement, Mapping[str, Any], _Prepared]]] = []
    for index, (_, context) in enumerate(works):
        mine = [(st, params, _prepared(conn, st, None)) for st, params in context.get(_ahead, ())]
        reads.append(mine)
        if mine:
            alike.setdefault(tuple(read for _, _, read in mine), []).append(index)
        else:  # it announced nothing: unlocked, its first read would need locks
            outcomes[index].alone = True
    raw.autocommit = True
    try:
        for parts, members in alike.items():
            args: dict[str, Any] = {}
            for m, index in enumerate(members):
                for i, (_, params, read) in enumerate(reads[index]):
                    args.update(_named(read.parameters(params), f"m{m}r{i}_"))
            by_row = composed.reads_by_row(parts, len(members), conn.dialect)
            cursor = _execute_composed(conn, raw, by_row, args)
            try:
                rows = cursor.fetchall()
            finally:
                cursor.close()
            found_rows: dict[int, list[Any]] = {}
            for row in rows:
                found_rows.setdefault(row[0], []).append(row)
            for m, index in enumerate(members):
                mine_rows = found_rows.get(m, [])
                if len(mine_rows) != 1:  # a read found several rows: on its own, as usual
                    outcomes[index].alone = True
                    continue
                if _split_row(mine_rows[0], 1, reads[index], ahead[index]):
                    outcomes[index].alone = True  # a locking read found a row
        inserts: list[_Queued] = []
        for (work, context), outcome, rows_ahead in zip(works, outcomes, ahead, strict=True):
            if outcome.alone:
                continue
            transaction = Transaction(own_begin=True, unlocked=True)
            transaction.begun = True
            transaction.read_ahead = rows_ahead
            conn.info[_INFO_KEY] = transaction
            try:
                outcome.result = context.run(work, conn)
            except LocksNeeded:
                outcome.alone = True
            except Exception as exc:  # the work's answer (a refusal), its INSERTs undone
                outcome.error = exc
            else:
                inserts.extend(transaction.deferred)
            finally:
                conn.info.pop(_INFO_KEY, None)
        if inserts:
            statement, args = _all_inserts(conn, inserts)
            try:
                _execute_composed(conn, raw, statement, args).close()
            except sa.exc.IntegrityError:
                for outcome in outcomes:
                    if outcome.error is None:
                        outcome.alone, outcome.result = True, None
        return outcomes
    finally:
        try:
            raw.autocommit = False
        except conn.dialect.loaded_dbapi.Error:
            conn.invalidate()
