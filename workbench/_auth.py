"""The `httpx2.Auth` that signs each attempt over the exact bytes it sends."""

from __future__ import annotations

import logging
from collections.abc import Callable, Generator
from datetime import UTC, datetime, timedelta

import httpx2

from workbench.signing import canonical_path, format_timestamp, sign

__all__ = ["SigningAuth", "redact_signature"]

log = logging.getLogger("workbench")


def redact_signature(signature: str) -> str:
    """The first 8 hex digits of a signature: enough to compare, useless to forge."""
    return f"{signature[:8]}…"


def _utc_now() -> datetime:
    return datetime.now(UTC)


class SigningAuth(httpx2.Auth):
    """Adds X-Api-Key, X-Timestamp and X-Signature to a request.

    httpx2 runs the flow on every ``send``, so each retry is signed afresh with
    its own timestamp. The signed body is ``request.content``: the very bytes
    that go on the wire.

    Attributes:
        clock: the local clock (aware UTC); replaceable, for tests.
        clock_offset: added to the local clock when stamping requests; learnt
            from the server's ``Date`` header after a skew rejection.
    """

    requires_request_body = True

    def __init__(self, api_key: str, secret_key: str) -> None:
        self._api_key = api_key
        self._secret_key = secret_key
        self.clock: Callable[[], datetime] = _utc_now
        self.clock_offset = timedelta(0)

    def __repr__(self) -> str:
        return f"SigningAuth(api_key={self._api_key[:8]}…, secret_key=…)"

    def now(self) -> datetime:
        """The current time as the server should see it."""
        return self.clock() + self.clock_offset

    def auth_flow(
        self, request: httpx2.Request
    ) -> Generator[httpx2.Request, httpx2.Response, None]:
        timestamp = format_timestamp(self.now())
        path = canonical_path(request.url.path)
        body = request.content
        signature = sign(self._secret_key, timestamp, request.method, path, body)
        request.headers["X-Api-Key"] = self._api_key
        request.headers["X-Timestamp"] = timestamp
        request.headers["X-Signature"] = signature
        if log.isEnabledFor(logging.DEBUG):
            # Line 4 of the canonical string (the body's SHA-256) is withheld: for a
            # tokenisation it is a hash of card number, CVC and expiry, and with the card
            # mask from any response the number can be brute-forced from it in seconds.
            log.debug(
                "signed %s %s signature=%s canonical=%r",
                request.method,
                path,
                redact_signature(signature),
                f"{timestamp}\n{request.method}\n{path}\n<sha256 of the {len(body)}-byte body>",
            )
        yield request
