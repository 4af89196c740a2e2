"""Hot-path statements: SQLAlchemy Core compiled once per dialect, run on the DB-API cursor.

SQLAlchemy's ``Connection.execute`` costs 50-100 µs per statement even when the
compiled form is cached (execution context, events, result wrapping); the card
charge runs ten statements, so that alone capped the sandbox near 1,000 charges a
second of pure database time. The statements stay Core expressions (one source of
SQL for SQLite and PostgreSQL); only their execution is lean: parameters go through
each column type's own bind processor, results through its result processor, and
driver errors come back as SQLAlchemy's exception classes, inside the caller's
transaction.
"""

from __future__ import annotations

import collections
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine.interfaces import Dialect

__all__ = ["execute", "fetch_all", "fetch_one", "scalar"]

_Processor = Callable[[Any], Any] | None
#: What this module runs.
Statement = sa.Select[Any] | sa.Insert | sa.Update | sa.Delete


class _Prepared:
    """One statement compiled for one dialect (and, for an INSERT, one set of keys)."""

    __slots__ = (
        "_binds",
        "_positional",
        "_processed",
        "_record",
        "_results",
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
        self._positional = bool(compiled.positional)
        names = list(compiled.positiontup or ()) if self._positional else list(compiled.binds)
        table_defaults: dict[str, Any] = {}
        if isinstance(statement, sa.Insert):
            table = statement.table
            for column in getattr(table, "columns", ()):
                if column.default is not None and column.default.is_scalar:
                    table_defaults[column.key] = column.default.arg
        self._binds: list[tuple[str, Any, _Processor]] = []
        for name in names:
            bind = compiled.binds[name]
            default = None if bind.required else bind.effective_value
            if default is None:
                default = table_defaults.get(name)
            processor = bind.type.dialect_impl(dialect).bind_processor(dialect)
            self._binds.append((name, default, processor))
        self._processed = [
            (index, processor)
            for index, (_, _, processor) in enumerate(self._binds)
            if processor is not None
        ]
        columns = list(getattr(statement, "exported_columns", None) or ())
        self._results: list[_Processor] = [
            column.type.dialect_impl(dialect).result_processor(dialect, None) for column in columns
        ]
        fields: list[str] = [
            str(getattr(column, "key", None) or getattr(column, "name", "")) for column in columns
        ]
        self._record: Any = (
            collections.namedtuple("Record", fields, rename=True) if fields else None
        )

    def parameters(self, params: Mapping[str, Any]) -> tuple[Any, ...] | dict[str, Any]:
        get = params.get
        values = [get(name, default) for name, default, _ in self._binds]
        for index, processor in self._processed:
            value = values[index]
            if value is not None:
                values[index] = processor(value)
        if self._positional:
            return tuple(values)
        return {name: value for (name, _, _), value in zip(self._binds, values, strict=True)}

    def record(self, row: Sequence[Any]) -> Any:
        assert self._record is not None
        if not any(self._results):
            return self._record._make(row)
        return self._record._make(
            value if processor is None or value is None else processor(value)
            for processor, value in zip(self._results, row, strict=True)
        )


_cache: dict[tuple[int, str, tuple[str, ...] | None], _Prepared] = {}
_cache_lock = threading.Lock()


def _prepared(conn: sa.Connection, statement: Statement, keys: Sequence[str] | None) -> _Prepared:
    dialect = conn.dialect
    # Keyed by id(): each entry holds its statement, so no live entry's id is reused.
    # Hot-path statements are module constants; anything else still costs one entry.
    cache_key = (id(statement), dialect.name, tuple(keys) if keys is not None else None)
    prepared = _cache.get(cache_key)
    if prepared is None:
        with _cache_lock:
            prepared = _cache.setdefault(cache_key, _Prepared(statement, dialect, keys))
    return prepared


def _insert_keys(statement: Statement, params: Mapping[str, Any]) -> list[str] | None:
    return sorted(params) if isinstance(statement, sa.Insert) else None


def _run(conn: sa.Connection, prepared: _Prepared, params: Mapping[str, Any]) -> Any:
    raw = conn.connection.driver_connection
    assert raw is not None
    args = prepared.parameters(params)
    cursor = raw.cursor()
    try:
        cursor.execute(prepared.sql, args)
    except conn.dialect.loaded_dbapi.Error as exc:
        cursor.close()
        raise sa.exc.DBAPIError.instance(
            prepared.sql, args, exc, conn.dialect.loaded_dbapi.Error, dialect=conn.dialect
        ) from exc
    return cursor


def fetch_one(conn: sa.Connection, statement: Statement, params: Mapping[str, Any]) -> Any:
    """The first row of a SELECT (or an INSERT ... RETURNING), as a named tuple, or ``None``."""
    prepared = _prepared(conn, statement, _insert_keys(statement, params))
    cursor = _run(conn, prepared, params)
    try:
        row = cursor.fetchone()
    finally:
        cursor.close()
    return None if row is None else prepared.record(row)


def fetch_all(conn: sa.Connection, statement: Statement, params: Mapping[str, Any]) -> list[Any]:
    """Every row of a SELECT, as named tuples."""
    prepared = _prepared(conn, statement, None)
    cursor = _run(conn, prepared, params)
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
    prepared = _prepared(conn, statement, _insert_keys(statement, params))
    cursor = _run(conn, prepared, params)
    try:
        return int(cursor.rowcount)
    finally:
        cursor.close()
