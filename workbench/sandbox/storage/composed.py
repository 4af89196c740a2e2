"""PostgreSQL statements made of several others, composed as SQLAlchemy constructs.

`workbench.sandbox.storage.statements` sends an unlocked transaction's reads as one
statement and its INSERTs as another, and a batch's reads and INSERTs likewise (see
its module doc). Each part is a Core statement the caller wrote; here they are put
together as Core too (lateral subqueries, a ``UNION ALL``, data-modifying CTEs), each
part's parameters renamed with a prefix so that two parts never share one, and the
whole compiled once per shape with PostgreSQL's own ``$1, $2, ...`` placeholders:
psycopg parses a query for its placeholders on every execution once it has more than
50 parameters (it caches the smaller ones), a millisecond for the INSERTs of a charge,
and does not parse ``$n`` ones at all (`psycopg.RawCursor`).

A part is given as what it was compiled to for one statement on its own: its Core
statement and the name each of its bind parameters got there (`Part`), so the values
bound for it on its own serve the composed statement, renamed.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

import sqlalchemy as sa
from sqlalchemy.engine.interfaces import Dialect
from sqlalchemy.sql import visitors

__all__ = ["Composed", "Part", "inserts_as_one", "reads_as_one", "reads_by_row"]


class Part(Protocol):
    """One statement of a composition, as compiled on its own (`statements._Prepared`)."""

    @property
    def statement(self) -> sa.Select[Any] | sa.Insert | sa.Update | sa.Delete: ...

    @property
    def bind_names(self) -> Mapping[sa.BindParameter[Any], str]: ...

    @property
    def names(self) -> tuple[str, ...]: ...


class Composed:
    """A composed statement's SQL (``$n`` placeholders) and the parameter of each ``$n``."""

    __slots__ = ("names", "sql")

    def __init__(
        self, statement: sa.Select[Any] | sa.CompoundSelect[Any] | sa.Insert, dialect: Dialect
    ):
        compiled = statement.compile(dialect=_numbered(dialect.name, dialect.driver))
        self.sql: str = compiled.string
        #: The parameter names, ``$1`` first.
        self.names: tuple[str, ...] = tuple(compiled.positiontup or ())

    def values(self, args: Mapping[str, Any]) -> list[Any]:
        """The values for `sql`, from ``args`` by (renamed) parameter name."""
        return [args[name] for name in self.names]


@functools.cache
def _numbered(name: str, driver: str) -> Dialect:
    """The dialect ``name+driver`` with PostgreSQL's ``$n`` placeholders, not ``%(name)s``."""
    dialect_class: Any = sa.engine.URL.create(f"{name}+{driver}").get_dialect()
    numbered: Dialect = dialect_class(paramstyle="numeric_dollar")
    return numbered


def _renamed(part: Part, prefix: str) -> sa.Select[Any]:
    """``part``'s SELECT with each bind parameter named ``<prefix><its name alone>``."""
    names = part.bind_names

    def rename(element: Any, **_kw: Any) -> Any:
        if isinstance(element, sa.BindParameter):
            return sa.bindparam(f"{prefix}{names[element]}", type_=element.type)
        return None

    select = part.statement
    assert isinstance(select, sa.Select)
    statement = visitors.replacement_traverse(select, {}, rename)
    assert isinstance(statement, sa.Select)
    return statement


def _side_by_side(parts: Sequence[Part], prefix: str, *first: Any) -> sa.Select[Any]:
    """``SELECT <first>, r0.*, r1.*, ... FROM (SELECT 1) LEFT JOIN LATERAL (...) r0 ...``.

    Each read's columns follow a ``_found`` column, NULL when it found no row.
    """
    joined: sa.FromClause = sa.select(sa.literal_column("1")).subquery("_one")
    laterals = []
    for i, part in enumerate(parts):
        found = _renamed(part, f"{prefix}r{i}_").subquery("q")
        lateral = sa.select(sa.true().label("_found"), *found.c).lateral(f"r{i}")
        joined = joined.outerjoin(lateral, sa.true())
        laterals.append(lateral)
    return sa.select(*first, *laterals).select_from(joined)


@functools.lru_cache(maxsize=64)
def reads_as_one(parts: tuple[Part, ...], dialect: Dialect) -> Composed:
    """One statement returning the row (or NULLs) of each SELECT, side by side.

    Parameters renamed ``r<read>_``.
    """
    return Composed(_side_by_side(parts, ""), dialect)


@functools.lru_cache(maxsize=64)
def reads_by_row(parts: tuple[Part, ...], count: int, dialect: Dialect) -> Composed:
    """`reads_as_one` for ``count`` transactions making the same reads: a row each,
    first its number (parameters renamed ``m<number>r<read>_``).

    Not one row for all: PostgreSQL plans a chain of lateral joins in a time that grows
    exponentially with its length (68 ms for seven transactions' reads, a second for
    fifteen); a UNION of short chains is planned in linear time.
    """
    arms = [
        _side_by_side(parts, f"m{m}", sa.literal_column(str(m)).label("_member"))
        for m in range(count)
    ]
    return Composed(sa.union_all(*arms), dialect)


@functools.lru_cache(maxsize=64)
def inserts_as_one(parts: tuple[Part, ...], dialect: Dialect) -> Composed:
    """One statement making every INSERT of ``parts``, all of them or none.

    ``WITH d0 AS (INSERT ...), ... INSERT ...``; parameters renamed ``d<insert>_``. Each
    part is an INSERT compiled for the keys it was given: its values here are those keys.
    """
    inserts = []
    for i, part in enumerate(parts):
        statement = part.statement
        assert isinstance(statement, sa.Insert)
        table = statement.table
        assert isinstance(table, sa.Table)
        values = {
            name: sa.bindparam(f"d{i}_{name}", type_=table.c[name].type) for name in part.names
        }
        inserts.append(statement.values(values))
    *first, last = inserts
    return Composed(last.add_cte(*(insert.cte(f"d{i}") for i, insert in enumerate(first))), dialect)
