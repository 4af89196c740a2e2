"""Keyset pagination: iterate every item across pages, sync or async, or get a DataFrame."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from typing import TYPE_CHECKING, Generic, TypeVar

if TYPE_CHECKING:
    import pandas as pd

    from workbench.models._base import APIObject, CursorPage

__all__ = ["AsyncPager", "SyncPager"]

ItemT = TypeVar("ItemT", bound="APIObject")


class _PagerBase(Generic[ItemT]):
    def __init__(self, *, max_items: int | None) -> None:
        if max_items is not None and max_items < 0:
            raise ValueError("max_items must be >= 0")
        self._max_items = max_items

    def _take(self, page: CursorPage[ItemT], seen: int) -> list[ItemT]:
        if self._max_items is None:
            return page.items
        return page.items[: max(0, self._max_items - seen)]

    def _done(self, page: CursorPage[ItemT], seen: int) -> bool:
        if self._max_items is not None and seen >= self._max_items:
            return True
        return not page.next_cursor


class SyncPager(_PagerBase[ItemT]):
    """Iterates over every item of a keyset-paginated listing, fetching pages lazily.

    ``for sub in client.subscriptions.list(status="active"): ...`` reads page
    after page, passing each ``nextCursor`` on, until the last page (or
    ``max_items``).
    """

    def __init__(
        self,
        fetch: Callable[[str | None], CursorPage[ItemT]],
        *,
        max_items: int | None = None,
    ) -> None:
        super().__init__(max_items=max_items)
        self._fetch = fetch

    def pages(self) -> Iterator[CursorPage[ItemT]]:
        """Each page in turn, as the service returned it."""
        cursor: str | None = None
        seen = 0
        while True:
            page = self._fetch(cursor)
            seen += len(self._take(page, seen))
            yield page
            if self._done(page, seen):
                return
            cursor = page.next_cursor

    def __iter__(self) -> Iterator[ItemT]:
        seen = 0
        for page in self.pages():
            items = self._take(page, seen)
            seen += len(items)
            yield from items

    def to_list(self) -> list[ItemT]:
        """Every item, in order."""
        return list(self)

    def to_frame(self) -> pd.DataFrame:
        """Every item as a row of a `pandas.DataFrame` (see `workbench.frames.to_frame`)."""
        from workbench.frames import to_frame

        return to_frame(self)


class AsyncPager(_PagerBase[ItemT]):
    """The async twin of `SyncPager`: ``async for sub in client.subscriptions.list(): ...``."""

    def __init__(
        self,
        fetch: Callable[[str | None], Awaitable[CursorPage[ItemT]]],
        *,
        max_items: int | None = None,
    ) -> None:
        super().__init__(max_items=max_items)
        self._fetch = fetch

    async def pages(self) -> AsyncIterator[CursorPage[ItemT]]:
        """Each page in turn, as the service returned it."""
        cursor: str | None = None
        seen = 0
        while True:
            page = await self._fetch(cursor)
            seen += len(self._take(page, seen))
            yield page
            if self._done(page, seen):
                return
            cursor = page.next_cursor

    async def __aiter__(self) -> AsyncIterator[ItemT]:
        seen = 0
        async for page in self.pages():
            items = self._take(page, seen)
            seen += len(items)
            for item in items:
                yield item

    async def to_list(self) -> list[ItemT]:
        """Every item, in order."""
        return [item async for item in self]

    async def to_frame(self) -> pd.DataFrame:
        """Every item as a row of a `pandas.DataFrame` (see `workbench.frames.to_frame`)."""
        from workbench.frames import to_frame

        return to_frame(await self.to_list())
