"""A PostgreSQL database of a test's own on 127.0.0.1:5432, dropped afterwards.

Shared by the sandbox tests (``tests/sandbox``) and the parity tests (``tests/parity``).
Where no server answers, the caller's test skips, printing why; the suite passes with
SQLite alone.
"""

from __future__ import annotations

import contextlib
import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa

__all__ = ["PG_ADMIN_URL", "PgDatabase", "database_url", "pg_available"]

PG_ADMIN_URL = os.environ.get(
    "WORKBENCH_TEST_PG_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/postgres"
)


def pg_available() -> str | None:
    """``None`` when PostgreSQL answers, else the reason it does not."""
    try:
        engine = sa.create_engine(PG_ADMIN_URL, connect_args={"connect_timeout": 2})
        with engine.connect() as conn:
            conn.execute(sa.text("select 1"))
        engine.dispose()
    except Exception as exc:
        return f"{type(exc).__name__}: {str(exc).splitlines()[0][:120]}"
    return None


class PgDatabase:
    """A database of its own on the local PostgreSQL, dropped by `drop`."""

    def __init__(self) -> None:
        self.name = f"wb_sandbox_test_{uuid.uuid4().hex[:12]}"
        self.admin = sa.create_engine(PG_ADMIN_URL, isolation_level="AUTOCOMMIT")
        with self.admin.connect() as conn:
            conn.execute(sa.text(f'CREATE DATABASE "{self.name}"'))
        self.url = PG_ADMIN_URL.rsplit("/", 1)[0] + f"/{self.name}"

    def drop(self) -> None:
        with self.admin.connect() as conn:
            conn.execute(sa.text(f'DROP DATABASE IF EXISTS "{self.name}" WITH (FORCE)'))
        self.admin.dispose()


@contextlib.contextmanager
def database_url(backend: str, folder: Path) -> Iterator[str]:
    """A database of its own on ``backend`` ("sqlite" or "postgres"), dropped afterwards.

    The PostgreSQL one skips, printing why, when no server answers.
    """
    if backend == "sqlite":
        yield f"sqlite:///{folder / 'sandbox.db'}"
        return
    reason = pg_available()
    if reason is not None:
        print(f"PostgreSQL not reachable ({reason}); the postgres run is skipped")
        pytest.skip(f"PostgreSQL not reachable at {PG_ADMIN_URL}: {reason}")
    database = PgDatabase()
    try:
        yield database.url
    finally:
        database.drop()
