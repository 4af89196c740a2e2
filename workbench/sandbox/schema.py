"""The sandbox's schema: every table of every feature, registered on one `MetaData`.

Each feature package keeps its tables in its own ``tables`` module, on the shared
`workbench.sandbox.tables.metadata`; importing this module imports every one of them,
so `metadata` here is complete whatever else was imported. The migrations create it
(`workbench.sandbox.migrations`), and a merchant's reset empties its tables
(`workbench.sandbox.control`). A new table module is added to `TABLE_MODULES`.
"""

from __future__ import annotations

from types import ModuleType

from workbench.sandbox import replay, tables
from workbench.sandbox.subscriptions import tables as subscription_tables

__all__ = ["TABLE_MODULES", "metadata"]

#: The modules that define the sandbox's tables: the shared ones first, then each feature's.
TABLE_MODULES: tuple[ModuleType, ...] = (tables, replay, subscription_tables)

#: Every table of the sandbox (the same object as `workbench.sandbox.tables.metadata`).
metadata = tables.metadata
