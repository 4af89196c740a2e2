"""An API key and its merchant's switches, as the database has them: `KeyRecord`.

Who may call, with which secret, under which rate limit, with which fail-next switch
or latency pending: one row of ``api_keys`` joined to its merchant, read in one
statement (`look_up`). On PostgreSQL a record kept between requests is only a guess
(another worker may have changed the row): whoever acts on it reads the row again,
inside its own transaction (`confirm_key`) or just before it acts (`look_up`); a row
that differs comes back as a `Stale` value, for the request to be settled on it
(`workbench.sandbox.context.Caller.settle`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import sqlalchemy as sa

from workbench.sandbox import tables
from workbench.sandbox.storage import AnyRow

if TYPE_CHECKING:
    from workbench.sandbox.storage import Database, PlannedRead, ReadPlan

__all__ = [
    "KEY_TABLES",
    "KeyRecord",
    "Limit",
    "Stale",
    "confirm_key",
    "look_up",
    "plan_key_read",
]

#: A rate limit: (requests per second sustained, burst); a rate of 0 turns limiting off.
Limit = tuple[float, int]

#: The tables a `KeyRecord` is read from: a change to any of them empties the key cache.
KEY_TABLES = (tables.api_keys, tables.merchants, tables.rate_limits)
# A key and its merchant's switches, in one statement built once (read on every signed
# request on PostgreSQL).
_K, _M, _L = KEY_TABLES
_KEY_LOOKUP = (
    sa.select(
        _K.c.api_key,
        _K.c.secret_key,
        _K.c.merchant_id,
        _K.c.store_id,
        _K.c.revoked,
        _M.c.fail_next,
        _M.c.latency_ms,
        _L.c.per_second,
        _L.c.burst,
    )
    .join(_M, _M.c.id == _K.c.merchant_id)
    .outerjoin(_L, _L.c.merchant_id == _K.c.merchant_id)
    .where(_K.c.api_key == sa.bindparam("f_api_key"))
)


class KeyRecord:
    """An API key row and its merchant's control switches."""

    __slots__ = (
        "api_key",
        "fail_next",
        "latency_ms",
        "merchant_id",
        "rate_limit",
        "revoked",
        "secret_key",
        "store_id",
    )

    def __init__(self, row: AnyRow) -> None:
        self.api_key = str(row.api_key)
        self.secret_key = str(row.secret_key)
        self.merchant_id = str(row.merchant_id)
        self.store_id = str(row.store_id)
        self.revoked = bool(row.revoked)
        self.fail_next = row.fail_next if row.fail_next is None else str(row.fail_next)
        self.latency_ms = int(str(row.latency_ms))
        self.rate_limit: Limit | None = (
            None if row.per_second is None else (float(row.per_second), int(row.burst))
        )

    def _values(self) -> tuple[object, ...]:
        return tuple(getattr(self, name) for name in self.__slots__)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, KeyRecord) and self._values() == other._values()

    def __repr__(self) -> str:
        return f"KeyRecord(merchant_id={self.merchant_id!r}, revoked={self.revoked})"


@dataclass(frozen=True, slots=True)
class Stale:
    """A guessed key record found out of date.

    Attributes:
        record: the key's record as the database has it now (``None``: the key is gone).
    """

    record: KeyRecord | None


def look_up(db: Database, api_key: str) -> KeyRecord | None:
    """The key's record as the database has it now (blocking: run it in a thread)."""
    with db.read() as conn:
        row = conn.execute(_KEY_LOOKUP, {"f_api_key": api_key}).first()
    return None if row is None else KeyRecord(row)


def plan_key_read(plan: ReadPlan, api_key: str) -> PlannedRead:
    """Declare `confirm_key`'s read of ``api_key`` on a transaction's plan."""
    return plan.read(_KEY_LOOKUP, {"f_api_key": api_key})


def confirm_key(conn: sa.Connection, record: KeyRecord, read: PlannedRead) -> Stale | None:
    """Read the key's row in the caller's transaction: ``None`` when it is ``record``,
    else what it is now.

    ``read`` is the read declared on the transaction's plan (`plan_key_read`): run it
    before the transaction reads or writes anything else, and write nothing when the
    record is stale.
    """
    row = read.first(conn)
    fresh = None if row is None else KeyRecord(row)
    return None if fresh == record else Stale(fresh)
