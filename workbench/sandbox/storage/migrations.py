"""The sandbox database's schema version, the steps that bring an older one up to date, reset.

A sandbox database persists (an SQLite file in the user data directory, a team's
PostgreSQL), so it records the version of the schema that wrote it: the ``meta`` row
``schema_version``. `open_schema`, run when a sandbox opens its database:

- on a database without the sandbox's tables, creates every table and records
  `SCHEMA_VERSION`;
- on one at `SCHEMA_VERSION`, does nothing;
- on an older one, runs the `STEPS` from its version up, in order, in the same
  transaction as the new version's record (SQLite and PostgreSQL both roll DDL back),
  so a failing step leaves the database as it was;
- refuses (`SchemaVersionError`) a newer one, or one it cannot read, with a message
  naming ``workbench sandbox --reset``, which `describe_reset` and `reset_database`
  serve.

A database written before versions were recorded holds version 1's tables (those of
`V1_TABLES`) and no record; it is taken as version 1.

Which tables the sandbox has, and in what order a new database creates them, is not
storage's to know: the composition root gives that list (`workbench.sandbox.schema.TABLES`)
to `open_schema`, `schema_version` and the reset functions.

The steps are our own functions of a connection rather than Alembic revisions: the
schema is one `MetaData` of twenty tables, a step so far adds a table, a column or an
index (SQLAlchemy's DDL constructs say it in one statement on both databases), and
the sandbox runs them itself at startup under its own write lock, with no migration
environment, configuration file or revision folder to ship in the wheel. A test
compares version 1 brought up by the steps with a database created afresh, so a table
change without its step fails. Should a step need what SQLite's ``ALTER TABLE`` cannot
do (change a column's type or constraint, which means copying the table), Alembic's
batch operations are made for that, and this module would hand over to it.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path

import sqlalchemy as sa
from sqlalchemy.engine import make_url

from workbench.sandbox.storage.database import Database, create_engine, is_memory_url
from workbench.sandbox.storage.registry import meta, metadata

__all__ = [
    "SCHEMA_VERSION",
    "STEPS",
    "V1_TABLES",
    "SchemaVersionError",
    "describe_reset",
    "open_schema",
    "reset_command",
    "reset_database",
    "reset_targets",
    "schema_version",
]

#: A migration step: brings a database from the version before its own up to its own.
Step = Callable[[sa.Connection], None]


def _v2_card_length_and_unsettled_money(conn: sa.Connection) -> None:
    """Version 2: a token keeps its card number's length (its mask does), and a payment
    that never captured shows no commission."""
    conn.exec_driver_sql("ALTER TABLE card_tokens ADD COLUMN number_length SMALLINT")
    conn.exec_driver_sql(
        "UPDATE payments SET commission = 0, net_amount = 0 WHERE status <> 'captured'"
    )


def _v3_address_buckets(conn: sa.Connection) -> None:
    """Version 3: token buckets per client address of the routes that take no signature."""
    metadata.tables["address_buckets"].create(conn)


def _v4_transaction_ids(conn: sa.Connection) -> None:
    """Version 4: the transactionIds taken by a payment or a checkout session, one row
    each, so a charge and a session creation racing on one are never both accepted."""
    metadata.tables["transaction_ids"].create(conn)


def _v5_delivery_claims(conn: sa.Connection) -> None:
    """Version 5: a webhook attempt holds its event until a wall-clock time
    (``events.claimed_until``), so no two processes send the same attempt."""
    column = metadata.tables["events"].c.claimed_until
    kind = column.type.compile(dialect=conn.dialect)
    conn.exec_driver_sql(f"ALTER TABLE events ADD COLUMN claimed_until {kind}")


def _v6_merchant_creation_time(conn: sa.Connection) -> None:
    """Version 6: a merchant records when it was made (merchants on demand).
    The secrets stored in clear are sealed by the sandbox when it opens the database
    (`workbench.sandbox.merchant_secrets.seal_plain_secrets`: the key is not storage's)."""
    column = metadata.tables["merchants"].c.created_at
    kind = column.type.compile(dialect=conn.dialect)
    conn.exec_driver_sql(f"ALTER TABLE merchants ADD COLUMN created_at {kind}")


def _v7_delivery_answers(conn: sa.Connection) -> None:
    """Version 7: a webhook attempt records where it went, how long the receiver took
    and the start of its answer (the dashboard shows them); older attempts keep NULLs."""
    table = metadata.tables["event_deliveries"]
    for name in ("target_url", "latency_ms", "response_excerpt"):
        kind = table.c[name].type.compile(dialect=conn.dialect)
        conn.exec_driver_sql(f"ALTER TABLE event_deliveries ADD COLUMN {name} {kind}")


def _v8_delivery_indexes(conn: sa.Connection) -> None:
    """Version 8: the indexes a webhook pass reads the pending events and counts the
    attempts in flight by (``ix_events_pending``, ``ix_events_claims``)."""
    for index in metadata.tables["events"].indexes:
        if index.name in ("ix_events_pending", "ix_events_claims"):
            index.create(conn)


def _v9_request_log(conn: sa.Connection) -> None:
    """Version 9: each merchant's last API requests, for the dashboard (the request log)."""
    metadata.tables["request_log"].create(conn)


#: ``version -> step`` that brings a database from ``version - 1`` up to ``version``.
#: Version 1 is the schema as the sandbox created it before versions were recorded.
STEPS: Mapping[int, Step] = {
    2: _v2_card_length_and_unsettled_money,
    3: _v3_address_buckets,
    4: _v4_transaction_ids,
    5: _v5_delivery_claims,
    6: _v6_merchant_creation_time,
    7: _v7_delivery_answers,
    8: _v8_delivery_indexes,
    9: _v9_request_log,
}

#: The schema this code creates and serves.
SCHEMA_VERSION = max(STEPS, default=1)

#: The tables of version 1, by which an unversioned database is recognised.
V1_TABLES = frozenset(
    {
        "accepted_signatures",
        "api_keys",
        "card_tokens",
        "customers",
        "event_deliveries",
        "events",
        "idempotency_records",
        "leases",
        "merchants",
        "meta",
        "payments",
        "rate_buckets",
        "rate_limits",
        "refunds",
        "saved_cards",
        "sessions",
        "stores",
        "subscription_charges",
        "subscriptions",
    }
)

_VERSION_KEY = "schema_version"
#: Files an SQLite database leaves beside itself: the journal, the write lock, its
#: wake-up pipe and the key cache's stamp (`Database.sidecar`).
_SQLITE_SIDECARS = ("-wal", "-shm", "-journal", "-write.lock", "-write.lock.wake", "-keys.stamp")


class SchemaVersionError(RuntimeError):
    """The database was written by a schema this version of the sandbox cannot serve."""


def reset_command(url: str, default_url: str | None = None) -> str:
    """The command that starts the database at ``url`` afresh (password hidden)."""
    if url == default_url:
        return "workbench sandbox --reset"
    return f"workbench sandbox --db {_shown(url)} --reset"


def _shown(url: str) -> str:
    return make_url(url).render_as_string(hide_password=True)


def _refuse(db: Database, why: str, default_url: str | None) -> SchemaVersionError:
    return SchemaVersionError(
        f"The sandbox database {_shown(db.url)} {why}. Start it afresh with "
        f"`{reset_command(db.url, default_url)}`, which deletes the sandbox's data in it, or "
        "point the sandbox at another database (--db)."
    )


def _names(tables: Iterable[sa.Table]) -> frozenset[str]:
    """The names of the sandbox's tables: ``tables`` and those of version 1."""
    return V1_TABLES | {table.name for table in tables}


def _found_version(
    conn: sa.Connection, present: set[str], tables: Iterable[sa.Table]
) -> tuple[int | None, bool]:
    """The version the database is at (``None``: none of our tables) and whether it says so."""
    ours = present & _names(tables)
    if not ours:
        return None, False
    if "meta" in present:
        value = conn.execute(
            sa.select(meta.c.value).where(meta.c.key == _VERSION_KEY)
        ).scalar_one_or_none()
        if value is not None:
            return (int(value) if value.isdigit() else -1), True
    missing = V1_TABLES - present
    return (1 if not missing else -1), False


def schema_version(db: Database, tables: Iterable[sa.Table]) -> int | None:
    """The schema version of the database (``None``: none of the sandbox's tables yet).

    A database written before versions were recorded reports 1; an unreadable record,
    or an unversioned database missing some of version 1's tables, reports -1.

    Args:
        db: the database.
        tables: every table of the sandbox.
    """
    with db.engine.connect() as conn:
        return _found_version(conn, set(sa.inspect(conn).get_table_names()), tables)[0]


def open_schema(
    db: Database,
    tables: Sequence[sa.Table],
    *,
    steps: Mapping[int, Step] = STEPS,
    default_url: str | None = None,
) -> tuple[int | None, int]:
    """Create, migrate or check the database's tables; the version found and the one left.

    Args:
        db: the database, not yet used by anything else.
        tables: every table of the sandbox, in the order a new database creates them.
        steps: the migration steps (``version -> step``); the newest is the version the
            database is left at.
        default_url: the URL ``workbench sandbox`` uses without ``--db``, so that the
            refusal's command needs no ``--db`` for it.

    Returns:
        The version found (``None`` for a database without the sandbox's tables) and the
        version the database is at now.

    Raises:
        SchemaVersionError: the database is newer than ``steps`` know, or unreadable.
    """
    target = max(steps, default=1)
    with db.backend.schema_transaction() as conn:
        found, recorded = _found_version(conn, set(sa.inspect(conn).get_table_names()), tables)
        if found is None:  # none of the tables is there: nothing to check first
            metadata.create_all(conn, tables=tables, checkfirst=False)
        elif found < 1:
            raise _refuse(
                db,
                "holds the sandbox's tables but no schema version this sandbox can read "
                "(written by an early development version?)",
                default_url,
            )
        elif found > target:
            raise _refuse(
                db,
                f"was written by a newer Payments Workbench (schema version {found}; this "
                f"one knows versions up to {target}). Upgrade payments-workbench to use it",
                default_url,
            )
        else:
            for version in range(found + 1, target + 1):
                if version not in steps:
                    raise _refuse(db, f"is at schema version {found}", default_url)
                steps[version](conn)
        if found != target or not recorded:
            _record(conn, target)
    return found, target


def _record(conn: sa.Connection, version: int) -> None:
    done = conn.execute(
        sa.update(meta).where(meta.c.key == _VERSION_KEY).values(value=str(version))
    )
    if done.rowcount == 0:
        conn.execute(sa.insert(meta).values(key=_VERSION_KEY, value=str(version)))


def _sqlite_files(url: str) -> list[Path]:
    path = Path(str(make_url(url).database))
    return [path, *(Path(f"{path}{suffix}") for suffix in _SQLITE_SIDECARS)]


def _present_tables(url: str, tables: Iterable[sa.Table]) -> list[str]:
    engine = create_engine(url, poolclass=sa.pool.NullPool)
    try:
        with engine.connect() as conn:
            present = set(sa.inspect(conn).get_table_names())
    finally:
        engine.dispose()
    return sorted(present & _names(tables))


def reset_targets(url: str, tables: Iterable[sa.Table]) -> list[str]:
    """What `reset_database` would delete at ``url``: existing files, or tables present.

    Args:
        url: the database's URL.
        tables: every table of the sandbox (other tables of a PostgreSQL database stay).
    """
    if is_memory_url(url):
        return []
    if make_url(url).get_backend_name() == "sqlite":
        return [str(p) for p in _sqlite_files(url) if p.exists() or p.is_symlink()]
    return _present_tables(url, tables)


def describe_reset(url: str, tables: Iterable[sa.Table]) -> str:
    """What `reset_database` would delete at ``url`` (see `reset_targets`), in a sentence."""
    if is_memory_url(url):
        return "An in-memory database starts empty every time: nothing to delete."
    targets = reset_targets(url, tables)
    if not targets:
        return f"The database {_shown(url)} holds no sandbox data: nothing to delete."
    if make_url(url).get_backend_name() == "sqlite":
        what = "the sandbox database file and the files beside it (" + ", ".join(targets) + ")"
    else:
        what = (
            f"the sandbox's {len(targets)} tables from the database {_shown(url)} ("
            + ", ".join(targets)
            + "); other tables are left alone"
        )
    return (
        f"--reset deletes {what}: every payment, session, refund, subscription, event and "
        "idempotency record of every merchant. The built-in merchants, keys and customers "
        "are created again when the sandbox starts."
    )


def reset_database(url: str, tables: Iterable[sa.Table]) -> list[str]:
    """Delete the sandbox's data at ``url``: an SQLite file (and the files beside it) or the
    sandbox's tables in a PostgreSQL database. Stop every sandbox using it first.

    Args:
        url: the database's URL.
        tables: every table of the sandbox (see `reset_targets`).

    Returns:
        What was deleted: file paths, or table names.
    """
    present = reset_targets(url, tables)
    if not present or make_url(url).get_backend_name() == "sqlite":
        for path in present:
            os.unlink(path)
        return present
    engine = create_engine(url, poolclass=sa.pool.NullPool)
    try:
        with engine.begin() as conn:
            found = sa.MetaData()
            found.reflect(conn, only=present)
            found.drop_all(conn)
    finally:
        engine.dispose()
    return present
