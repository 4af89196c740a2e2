"""One call as asked: `RequestOptions`, the per-call `CallOptions`, the headers the client owns.

A resource method builds a `RequestOptions` (method, path, body) and names what
the call does (``action``) and to which object (``object_id``), so that those
watching the client (`workbench.tracking.Tracker`) read it from the answer
instead of parsing paths. The caller's per-call settings (`CallOptions`) are
laid over it just before sending.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, TypedDict

import httpx2

__all__ = ["OWNED_HEADERS", "CallOptions", "RequestOptions", "check_headers"]

#: Headers only the client may set, lower case, with what to do instead. The signature
#: covers the bytes the client serialises under the timestamp it stamps; a second value
#: from the caller would be replaced silently by `SigningAuth`, or break the signature.
OWNED_HEADERS: Mapping[str, str] = {
    "x-api-key": "the client sends its own api_key; use another Client for another key",
    "x-timestamp": "the client stamps every attempt itself when it signs it",
    "x-signature": "the client signs every attempt itself",
    "idempotency-key": "pass idempotency_key= to the method instead",
    "content-type": "the client sends JSON and says so",
    "content-length": "the client sends the length of the body it serialised",
}


def check_headers(headers: Mapping[str, str] | None, where: str) -> dict[str, str]:
    """The caller's extra headers as a plain dict, once none of them is the client's own.

    Args:
        headers: header names and values given by the caller.
        where: the argument they came in (``extra_headers``, ``default_headers``), for the error.

    Raises:
        ValueError: a header in `OWNED_HEADERS`, or a name or value that is not a string.
    """
    checked: dict[str, str] = {}
    for name, value in (headers or {}).items():
        if not isinstance(name, str) or not isinstance(value, str):
            raise ValueError(f"{where}: header names and values must be strings")
        reason = OWNED_HEADERS.get(name.lower())
        if reason is not None:
            raise ValueError(f"{where} may not set {name}: {reason}")
        checked[name] = value
    return checked


class CallOptions(TypedDict, total=False):
    """Per-call settings every resource method takes as keyword arguments.

    Attributes:
        timeout: seconds, or an `httpx2.Timeout`, for each attempt of this call
            (default: the client's).
        max_retries: retries after the first attempt of this call (default: the client's).
        extra_headers: more headers for this call, over the client's ``default_headers``;
            the headers of `OWNED_HEADERS` are refused.
    """

    timeout: float | httpx2.Timeout | None
    max_retries: int | None
    extra_headers: Mapping[str, str] | None


@dataclass(frozen=True, slots=True)
class RequestOptions:
    """One logical call, before any attempt.

    Every answer carries what the call was about on its `ResponseInfo`
    (``action``, ``object_id``, ``object_state``, ``object_alias``), read from
    the fields below; a new endpoint is tracked by filling them in.

    Attributes:
        method: the HTTP method, uppercase.
        path: the route path (``/v1/payments/pay_1``).
        body: the JSON object to send; ``None`` for no body.
        params: query parameters; ``None`` values are left out.
        signed: whether to sign (the public routes are not signed).
        idempotency_key: the caller's key; one is generated for POSTs when ``None``.
        timeout: this call's timeout per attempt; ``None`` for the client's.
        max_retries: this call's retries; ``None`` for the client's.
        extra_headers: this call's extra headers (checked against `OWNED_HEADERS`).
        action: what the call does, in the words of `workbench.spec`'s state tables
            where it has one (``charge``, ``capture``, ``charge_now``).
        object_id: the object the call acts on, when the caller names it (``pay_…``,
            ``sub_…``, or a public hash).
        id_field: for a call that creates its object, the answer's field holding its id.
        alias_field: the answer's field holding another id of the same object (a
            subscription's ``publicHash``, by which the buyer portal names it).
        state_field: the answer's field holding the object's state; ``None`` when the
            answer does not describe the object (a new card-update session).
        state: the state the call leaves the object in when the answer does not say
            (a queued charge leaves a subscription ``charging``); wins over ``state_field``.
    """

    method: str
    path: str
    body: Mapping[str, Any] | None = field(default=None, repr=False)
    params: Mapping[str, Any] | None = None
    signed: bool = True
    idempotency_key: str | None = None
    timeout: float | httpx2.Timeout | None = None
    max_retries: int | None = None
    extra_headers: Mapping[str, str] | None = field(default=None, repr=False)
    action: str | None = None
    object_id: str | None = None
    id_field: str | None = None
    alias_field: str | None = None
    state_field: str | None = "status"
    state: str | None = None

    def describe(self, body: Any, *, success: bool) -> tuple[str | None, str | None, str | None]:
        """The object's id, state and alias as the answer ``body`` shows them.

        Args:
            body: the decoded JSON answer.
            success: whether the answer is a success (an error shows no state).

        Returns:
            ``(object_id, object_state, object_alias)``, each ``None`` when unknown.
        """
        data = body if isinstance(body, dict) else {}
        object_id = self.object_id
        if object_id is None and self.id_field is not None:
            object_id = _text(data.get(self.id_field))
        if object_id is None or not success:
            return object_id, None, None
        state = self.state
        if state is None and self.state_field is not None:
            state = _text(data.get(self.state_field))
        alias = _text(data.get(self.alias_field)) if self.alias_field is not None else None
        return object_id, state, alias


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None
