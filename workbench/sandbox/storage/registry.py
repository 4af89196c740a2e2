"""The one `MetaData` every table of the sandbox is registered on, and the ``meta`` table.

Each feature package declares its tables on `metadata` in its ``tables`` module; which
tables a database holds, and in what order they are created, the composition root
says (`workbench.sandbox.schema.TABLES`, given to `workbench.sandbox.storage.migrations`).
``meta`` is storage's own key-value table: the schema version lives there, beside the
few values features keep in it.
"""

from __future__ import annotations

import sqlalchemy as sa

__all__ = ["meta", "metadata"]

#: The one `MetaData` of the sandbox: every feature's tables are registered on it.
metadata = sa.MetaData()

meta = sa.Table(
    "meta", metadata, sa.Column("key", sa.String(64), primary_key=True), sa.Column("value", sa.Text)
)
