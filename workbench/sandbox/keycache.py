"""`KeyCache`: API key records kept between requests by a single-process sandbox.

An SQLite sandbox is one process, so every change to a key or to a merchant's
control switches (fail-next, latency, its rate limit, reset) passes through it and
clears the cache. A PostgreSQL sandbox may run several workers, none of which sees the
others' changes, so there the cache is off and every request reads the database.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from workbench.sandbox.auth import KeyRecord

__all__ = ["KeyCache"]


class KeyCache:
    """Known keys by their public value; unknown keys are never kept.

    Args:
        enabled: whether to keep anything at all.
    """

    def __init__(self, *, enabled: bool) -> None:
        self.enabled = enabled
        self._records: dict[str, KeyRecord] = {}
        self._lock = threading.Lock()

    def get(self, api_key: str) -> KeyRecord | None:
        """The kept record, or ``None`` (look it up, then `put` it)."""
        return self._records.get(api_key)

    def put(self, record: KeyRecord) -> None:
        """Keep a record just read from the database."""
        if self.enabled:
            with self._lock:
                self._records[record.api_key] = record

    def clear(self) -> None:
        """Forget every record: call after changing a key or a merchant's switches."""
        with self._lock:
            self._records.clear()

    def __repr__(self) -> str:
        return f"KeyCache(enabled={self.enabled}, size={len(self._records)})"
