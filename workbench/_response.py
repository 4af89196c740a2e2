"""Raw access to the HTTP exchange behind a result: status, headers, ids, retries."""

from __future__ import annotations

from dataclasses import dataclass, field

import httpx2

from workbench._options import RequestOptions

__all__ = ["ResponseInfo"]


@dataclass(frozen=True, slots=True)
class ResponseInfo:
    """What the final attempt of a call got back, and how it got there.

    Attributes:
        method: the HTTP method.
        path: the route path requested.
        status_code: the HTTP status of the final attempt.
        headers: the response headers.
        request_id: the ``X-Request-Id`` the service answered with.
        idempotency_key: the Idempotency-Key sent on every attempt (``None`` for reads).
        retries: how many retries were taken (0 when the first attempt succeeded).
        http_response: the underlying `httpx2.Response`.
        action: what the call did, as its resource method named it (``capture``);
            ``None`` for a call that names none.
        object_id: the object the call acted on: the id it was called with, or for a
            call that creates an object, the id the answer gave it.
        object_state: the state the answer shows the object in (``None`` for an error
            answer, or an answer that does not describe the object).
        object_alias: another id the answer gives the object (a subscription's public hash).
        options: the call as it was asked, to repeat it (`workbench.waiting.wait_for_refund`).
    """

    method: str
    path: str
    status_code: int
    headers: httpx2.Headers = field(repr=False)
    request_id: str | None
    idempotency_key: str | None
    retries: int
    http_response: httpx2.Response = field(repr=False, compare=False)
    action: str | None = None
    object_id: str | None = None
    object_state: str | None = None
    object_alias: str | None = None
    options: RequestOptions | None = field(default=None, repr=False, compare=False)

    @property
    def replayed(self) -> bool:
        """Whether the service replayed a stored answer to an earlier call with this key."""
        value: str = self.headers.get("Idempotent-Replayed", "")
        return value.lower() == "true"

    @property
    def attempts(self) -> int:
        """How many requests were sent for this call."""
        return self.retries + 1
