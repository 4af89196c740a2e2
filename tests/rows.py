"""Rows changed behind the sandbox's back, as a race or a reconciler not yet run leaves them."""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa

__all__ = ["update_row"]


def update_row(db_url: str, table: sa.Table, row_id: str, **values: Any) -> None:
    """Set ``values`` on the row ``row_id`` of ``table``, in a transaction of its own."""
    engine = sa.create_engine(db_url)
    try:
        with engine.begin() as conn:
            conn.execute(sa.update(table).where(table.c.id == row_id).values(**values))
    finally:
        engine.dispose()
