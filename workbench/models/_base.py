"""What every result model shares: camelCase aliases, tolerance, raw response access."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING, Annotated, Generic, TypeVar

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, PrivateAttr
from pydantic.alias_generators import to_camel

from workbench._response import ResponseInfo

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["APIObject", "CursorPage", "Kurus", "UtcDatetime"]


def _as_utc(value: datetime) -> datetime:
    if value.tzinfo is None:
        return value.replace(tzinfo=UTC)
    return value.astimezone(UTC)


#: An amount in integer kuruş: a float or a numeric string is refused, never rounded.
Kurus = Annotated[int, Field(strict=True)]
#: A timestamp, always an aware datetime in UTC.
UtcDatetime = Annotated[datetime, AfterValidator(_as_utc)]


class APIObject(BaseModel):
    """Base of every result: snake_case attributes over the wire's camelCase.

    Unknown fields are kept (``model_extra``), never rejected, and statuses are
    plain strings, so a newer service never crashes an older client. The HTTP
    exchange behind the result is on `response`.
    """

    model_config = ConfigDict(
        extra="allow",
        populate_by_name=True,
        alias_generator=to_camel,
    )

    _response: ResponseInfo | None = PrivateAttr(default=None)

    @property
    def response(self) -> ResponseInfo | None:
        """Status code, headers, request id, idempotency key and retries of the call."""
        return self._response

    @property
    def request_id(self) -> str | None:
        """The ``X-Request-Id`` of the response (quote it to support)."""
        return self._response.request_id if self._response else None

    @property
    def idempotency_key(self) -> str | None:
        """The Idempotency-Key sent on every attempt of the call."""
        return self._response.idempotency_key if self._response else None

    @property
    def retries(self) -> int:
        """How many retries the call took."""
        return self._response.retries if self._response else 0

    @property
    def http_status(self) -> int | None:
        """The HTTP status code of the response."""
        return self._response.status_code if self._response else None


ItemT = TypeVar("ItemT", bound=APIObject)


class CursorPage(APIObject, Generic[ItemT]):
    """One page of a keyset listing: its items and the next page's cursor (``None`` at the end)."""

    items: list[ItemT]
    next_cursor: str | None = None

    def to_frame(self) -> pd.DataFrame:
        """This page's items as a DataFrame (see `workbench.frames.to_frame`)."""
        from workbench.frames import to_frame

        return to_frame(self.items)
