"""What every request and response body shares: the strict request base, field types, the envelope.

Each feature's ``models`` module builds its bodies on these. Requests are strict (an
amount of ``"100"`` or ``100.0`` is a type error) and forbid unknown fields, so a typo
such as ``amout`` is reported by name.
"""

from __future__ import annotations

from typing import Annotated, Any
from urllib.parse import urlsplit

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, field_validator

from workbench.spec import limits

__all__ = [
    "Amount",
    "ErrorEnvelope",
    "Identifier",
    "ResponseBody",
    "StrictRequest",
    "TransactionId",
    "Url",
]

Amount = Annotated[int, Field(ge=limits.MIN_AMOUNT, le=limits.MAX_AMOUNT)]
TransactionId = Annotated[str, Field(min_length=1, max_length=64, pattern=r"^[\x21-\x7e]+$")]


def _parsable_url(value: str) -> str:
    """A URL the sandbox can send to: it parses, names a host, any port is a number.

    Parsed twice, as httpx sends it and as the standard library splits it to sign a
    webhook (`workbench.signing.canonical_path`): httpx takes ``http://a]b/`` for a host
    with an escaped bracket, which ``urlsplit`` refuses.
    """
    import httpx  # with the first URL to check: the sandbox's start does not need it

    try:
        url = httpx.URL(value)
        urlsplit(value).port  # noqa: B018  (reading the port validates it)
    except (httpx.InvalidURL, ValueError) as exc:
        raise ValueError(f"not a valid URL: {exc}") from None
    if not url.host:
        raise ValueError("URL has no host")
    return value


Url = Annotated[
    str,
    Field(min_length=8, max_length=2048, pattern=r"^https?://[\x21-\x7e]+$"),
    AfterValidator(_parsable_url),
]
Identifier = Annotated[str, Field(min_length=1, max_length=64, pattern=r"^[\x21-\x7e]+$")]


class StrictRequest(BaseModel):
    """Base of every request body: strict types, unknown fields refused, no NUL characters."""

    model_config = ConfigDict(extra="forbid", strict=True)

    @field_validator("*", mode="after")
    @classmethod
    def _no_nul(cls, value: Any) -> Any:
        if isinstance(value, str) and "\x00" in value:
            raise ValueError("must not contain NUL characters")
        return value


class ResponseBody(BaseModel):
    """Base of the documented response bodies: fields beyond the listed ones allowed.

    Their validators are built when first used (``defer_build``), which for most is only
    when the OpenAPI document is made: the routes answer with replies they serialise
    themselves, and each route's error statuses alone made FastAPI build the envelope's
    some 250 times before the sandbox could answer anything.
    """

    model_config = ConfigDict(extra="allow", defer_build=True)


class ErrorEnvelope(ResponseBody):
    """Every error: ``code``, ``message``, ``requestId``."""

    code: str
    message: str
    requestId: str
