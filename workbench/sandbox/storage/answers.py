"""`settle`: the callers of a group or batch of writes answered, once it has ended.

Both loop groupers (`loopwrites.LoopWrites` on SQLite, `loopbatches.LoopBatches` on
PostgreSQL) answer their callers this way, after the commit.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from typing import Any

__all__ = ["Answer", "settle"]

#: A caller's future and what to settle it with: a result, or an exception.
Answer = tuple["asyncio.Future[Any]", Any, BaseException | None]


def settle(answers: Iterable[Answer]) -> None:
    """Answer each caller (one whose request was cancelled meanwhile is skipped)."""
    for future, result, exc in answers:
        if future.cancelled():
            continue
        if exc is None:
            future.set_result(result)
        else:
            future.set_exception(exc)
