"""A `Database` of a test's own with a probe table set created, for the storage tests."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import sqlalchemy as sa

from tests.postgres import database_url
from workbench.sandbox.storage import Database

__all__ = ["probe_database"]


@contextmanager
def probe_database(backend: str, folder: Path, meta: sa.MetaData) -> Iterator[Database]:
    """A database on ``backend`` ("sqlite" or "postgres") holding ``meta``'s tables.

    Disposed and dropped afterwards; the PostgreSQL one skips, printing why, when no
    server answers (`tests.postgres.database_url`).
    """
    with database_url(backend, folder) as url:
        database = Database(url)
        meta.create_all(database.engine)
        try:
            yield database
        finally:
            database.dispose()
