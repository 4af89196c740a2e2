"""Request signing: the one implementation both the client and the sandbox use.

The service authenticates a merchant call by an HMAC-SHA256 signature over a
*canonical string* of four lines joined by LF, with no trailing newline::

    <the exact X-Timestamp string sent>
    <HTTP method, uppercase>
    <route path: no domain, no query string, no trailing slash>
    <lowercase hex SHA-256 of the raw body bytes (of b"" when there is no body)>

`canonical_string` and `sign` take their parts *verbatim*: they never fix a
lowercase method or a path with a query string, because a signer that silently
repairs its input hides the very mistakes the server rejects. Use
`canonical_path` (or `sign_request`, which applies it) to derive the route path
from a URL the right way.
"""

from __future__ import annotations

import hashlib
import hmac
import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from urllib.parse import urlsplit

from workbench.spec.limits import TIMESTAMP_SKEW_SECONDS

__all__ = [
    "EMPTY_BODY_SHA256",
    "SignatureMismatch",
    "SignedHeaders",
    "SigningError",
    "TimestampInvalid",
    "body_sha256",
    "canonical_path",
    "canonical_string",
    "check_timestamp",
    "format_timestamp",
    "parse_timestamp",
    "sign",
    "sign_request",
    "verify",
]

EMPTY_BODY_SHA256 = hashlib.sha256(b"").hexdigest()

# ISO 8601 in UTC, `Z` only: an offset such as +00:00 is invalid by the spec. A fraction
# of a second (one to nine digits after a full stop) is ISO 8601 too, and what common
# libraries write (JavaScript's toISOString 3, Python 6, .NET's "o" 7, Go's RFC3339Nano
# up to 9); the instant keeps microseconds. The client itself sends whole seconds.
_TIMESTAMP_RE = re.compile(
    r"^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?Z$", re.ASCII
)
_OFFSET_RE = re.compile(r"(?:[+-]\d{2}:?\d{2}|[+-]\d{2})$")


class SigningError(ValueError):
    """Base class of the signing checks' failures."""


class TimestampInvalid(SigningError):
    """X-Timestamp is missing, malformed, carries an offset or is outside the window.

    Attributes:
        reason: one of ``missing``, ``malformed``, ``offset``, ``skew``.
    """

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason


class SignatureMismatch(SigningError):
    """X-Signature does not match the signature computed over the request."""


def body_sha256(body: bytes) -> str:
    """Lowercase hex SHA-256 of the raw body bytes (of ``b""`` for no body)."""
    return hashlib.sha256(body).hexdigest()


def format_timestamp(moment: datetime | None = None) -> str:
    """Format an aware datetime (default: now) as ``YYYY-MM-DDTHH:MM:SSZ`` in UTC.

    Raises:
        ValueError: if ``moment`` is naive; a naive time has no place in a signature.
    """
    if moment is None:
        moment = datetime.now(UTC)
    if moment.tzinfo is None or moment.utcoffset() is None:
        raise ValueError("timestamp must be timezone-aware")
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_timestamp(text: str | None) -> datetime:
    """Parse an X-Timestamp value into an aware UTC datetime.

    ``YYYY-MM-DDTHH:MM:SSZ``, with or without a fraction of a second (one to nine digits:
    ``2026-03-14T09:26:53.123Z``); an offset instead of ``Z`` is refused.

    Raises:
        TimestampInvalid: with reason ``missing``, ``offset`` or ``malformed``.
    """
    if text is None or text == "":
        raise TimestampInvalid("missing", "X-Timestamp header is missing")
    match = _TIMESTAMP_RE.match(text)
    if match is None:
        if "T" in text and _OFFSET_RE.search(text):
            raise TimestampInvalid(
                "offset", "X-Timestamp must be UTC ending in 'Z', not carry an offset"
            )
        raise TimestampInvalid(
            "malformed", "X-Timestamp is not an ISO 8601 UTC time like 2026-03-14T09:26:53Z"
        )
    year, month, day, hour, minute, second, fraction = match.groups()
    try:
        return datetime(
            int(year),
            int(month),
            int(day),
            int(hour),
            int(minute),
            int(second),
            int((fraction or "0")[:6].ljust(6, "0")),
            tzinfo=UTC,
        )
    except ValueError:
        raise TimestampInvalid("malformed", "X-Timestamp is not a valid calendar time") from None


def check_timestamp(
    text: str | None,
    *,
    now: datetime | None = None,
    skew_seconds: int = TIMESTAMP_SKEW_SECONDS,
) -> datetime:
    """Parse ``text`` and check it lies within ``skew_seconds`` of ``now`` (inclusive).

    Returns:
        The parsed timestamp.

    Raises:
        TimestampInvalid: missing, malformed, offset-carrying or skewed.
    """
    moment = parse_timestamp(text)
    current = now if now is not None else datetime.now(UTC)
    if abs(current - moment) > timedelta(seconds=skew_seconds):
        raise TimestampInvalid(
            "skew",
            f"X-Timestamp is more than {skew_seconds} seconds away from the server clock",
        )
    return moment


def canonical_path(url: str) -> str:
    """The route path of ``url`` as the canonical string wants it.

    Drops scheme, host, query string and fragment, and a trailing slash
    (``/`` itself stays ``/``).
    """
    path = urlsplit(url).path or "/"
    if len(path) > 1:
        path = path.rstrip("/") or "/"
    return path


def canonical_string(timestamp: str, method: str, path: str, body: bytes) -> str:
    """Join the four lines of the canonical string, each part taken verbatim."""
    return f"{timestamp}\n{method}\n{path}\n{body_sha256(body)}"


def sign(secret_key: str, timestamp: str, method: str, path: str, body: bytes) -> str:
    """Lowercase hex HMAC-SHA256 of the canonical string under ``secret_key``."""
    message = canonical_string(timestamp, method, path, body).encode("utf-8")
    return hmac.digest(secret_key.encode("utf-8"), message, "sha256").hex()


@dataclass(frozen=True, slots=True)
class SignedHeaders:
    """The three authentication headers of a signed request."""

    api_key: str
    timestamp: str
    signature: str

    def as_dict(self) -> dict[str, str]:
        """The headers as they go on the wire."""
        return {
            "X-Api-Key": self.api_key,
            "X-Timestamp": self.timestamp,
            "X-Signature": self.signature,
        }

    def __repr__(self) -> str:
        return (
            f"SignedHeaders(api_key={self.api_key[:8]}…, timestamp={self.timestamp!r}, "
            f"signature={self.signature[:8]}…)"
        )


def sign_request(
    *,
    api_key: str,
    secret_key: str,
    method: str,
    url: str,
    body: bytes = b"",
    timestamp: str | None = None,
) -> SignedHeaders:
    """Sign a request the way the service expects: uppercase method, canonical path.

    Args:
        api_key: the public key sent as X-Api-Key.
        secret_key: the secret key; used only as the HMAC key.
        method: the HTTP method (uppercased here).
        url: the full URL or path; the query string is dropped.
        body: the exact bytes that will be sent.
        timestamp: the X-Timestamp text to use (default: now).
    """
    ts = timestamp if timestamp is not None else format_timestamp()
    signature = sign(secret_key, ts, method.upper(), canonical_path(url), body)
    return SignedHeaders(api_key=api_key, timestamp=ts, signature=signature)


def verify(
    secret_key: str,
    *,
    signature: str | None,
    timestamp: str | None,
    method: str,
    path: str,
    body: bytes,
    now: datetime | None = None,
    skew_seconds: int = TIMESTAMP_SKEW_SECONDS,
) -> None:
    """Check a request's timestamp, then its signature, as the server does.

    ``method`` and ``path`` are what the server received (the path without the
    query string); the comparison is constant-time.

    Raises:
        TimestampInvalid: the timestamp is missing, malformed, offset or skewed.
        SignatureMismatch: the signature is missing or does not match.
    """
    check_timestamp(timestamp, now=now, skew_seconds=skew_seconds)
    assert timestamp is not None  # check_timestamp rejected None
    expected = sign(secret_key, timestamp, method, path, body)
    given = (signature or "").encode("ascii", "replace")
    if not hmac.compare_digest(expected.encode("ascii"), given):
        raise SignatureMismatch("X-Signature does not match the request")
