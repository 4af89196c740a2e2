"""What every request and response body shares: the strict request base, field types, the envelope.

Each feature's ``models`` module builds its bodies on these. Requests are strict (an
amount of ``"100"`` or ``true`` is a type error, and so is ``100.5``) and forbid unknown
fields, so a typo such as ``amout`` is reported by name. A whole number written with a
fraction or an exponent (``100.0``, ``1e2``) is the integer it equals, as JSON Schema
and the OpenAPI document say (docs/sandbox/decisions.md, "Whole numbers").
"""

from __future__ import annotations

from typing import Annotated, Any
from urllib.parse import urlsplit

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, field_validator, model_validator

from workbench.sandbox.return_urls import check_return_url
from workbench.spec import limits
from workbench.spec.ids import UUID4_PATTERN

__all__ = [
    "Amount",
    "ErrorEnvelope",
    "Identifier",
    "ResponseBody",
    "ReturnUrl",
    "StrictRequest",
    "TransactionId",
    "Url",
]

Amount = Annotated[int, Field(ge=limits.MIN_AMOUNT, le=limits.MAX_AMOUNT)]


def _transaction_id(value: str) -> str:
    """Any non-empty UTF-8 text (Turkish letters, spaces, symbols), exactly as sent.

    Refused: what is not UTF-8 at all (a lone surrogate such as ``"\\ud800"``, which
    JSON can spell but no database stores), NUL (`StrictRequest`), and the renewals'
    reserved prefix, so no merchant charge can take a renewal's place.
    """
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError("must be UTF-8 text (a lone surrogate is not)") from None
    if value.startswith(limits.RENEWAL_TRANSACTION_PREFIX):
        raise ValueError(
            f"values starting with {limits.RENEWAL_TRANSACTION_PREFIX!r} are reserved for "
            "subscription renewals"
        )
    return value


TransactionId = Annotated[
    str,
    Field(min_length=1, max_length=limits.TRANSACTION_ID_MAX),
    AfterValidator(_transaction_id),
]


def _parsable_url(value: str) -> str:
    """A URL the sandbox can send to: it parses, names a host, any port is a number.

    Parsed twice, as httpx2 sends it and as the standard library splits it to sign a
    webhook (`workbench.signing.canonical_path`): httpx2 takes ``http://a]b/`` for a host
    with an escaped bracket, which ``urlsplit`` refuses.
    """
    import httpx2  # with the first URL to check: the sandbox's start does not need it

    try:
        url = httpx2.URL(value)
        urlsplit(value).port  # noqa: B018  (reading the port validates it)
    except (httpx2.InvalidURL, ValueError) as exc:
        raise ValueError(f"not a valid URL: {exc}") from None
    if not url.host:
        raise ValueError("URL has no host")
    return value


Url = Annotated[
    str,
    Field(min_length=8, max_length=2048, pattern=r"^https?://[\x21-\x7e]+$"),
    AfterValidator(_parsable_url),
]
#: ``returnUrl``: any absolute http(s) URL, non-ASCII path, query and host included (an
#: IRI such as ``https://çiçek.example/sipariş``); no spaces or control characters, no
#: backslash, no user info, read as a browser reads it (`return_urls.check_return_url`).
#: The redirect to it is that reading, percent-encoded (`return_urls.with_params`).
#: ``callbackUrl`` stays `Url` (ASCII): its path is signed on every webhook.
ReturnUrl = Annotated[
    str,
    Field(min_length=8, max_length=2048, pattern=r"^https?://[^\x00-\x20\x7f-\x9f\\]+$"),
    AfterValidator(check_return_url),
]
Identifier = Annotated[str, Field(min_length=1, max_length=64, pattern=r"^[\x21-\x7e]+$")]


#: The largest whole number a JSON reader's double holds exactly (2**53); every integer
#: the sandbox takes is far below it (an amount at most 99,999,999,999).
_EXACT = 2**53


def _whole(value: Any) -> Any:
    """``value`` as an int when it is a number with no fractional part (``85.0``)."""
    if isinstance(value, float) and value.is_integer() and abs(value) <= _EXACT:
        return int(value)
    return value


class StrictRequest(BaseModel):
    """Base of every request body: strict types, unknown fields refused, no NUL characters;
    a whole number written with a fraction (``85.0``) read as the integer it is."""

    model_config = ConfigDict(extra="forbid", strict=True)

    @model_validator(mode="before")
    @classmethod
    def _whole_numbers(cls, data: Any) -> Any:
        if isinstance(data, dict) and any(type(v) is float for v in data.values()):
            return {key: _whole(value) for key, value in data.items()}
        return data

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
    #: Always a UUID v4: the request's own ``X-Request-Id`` or one the sandbox made.
    requestId: Annotated[str, Field(json_schema_extra={"format": "uuid", "pattern": UUID4_PATTERN})]
