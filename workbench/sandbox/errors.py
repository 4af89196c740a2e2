"""The error envelope ``{"code", "message", "requestId"}``: `ServiceError` and its answer.

Every failure leaves the sandbox in this envelope with the status `workbench.spec.ERRORS`
gives its code. A feature raises `ServiceError`; the edge's handlers
(`workbench.sandbox.edge.handlers`) turn it, and whatever FastAPI or Starlette raise, into
the envelope.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from starlette.responses import Response

from workbench.sandbox.context import STATE_KEY, RequestState
from workbench.spec import ERRORS

__all__ = ["ServiceError", "envelope_bytes", "error_response", "merchant_gone", "request_id_of"]


class ServiceError(Exception):
    """An answer in the error envelope; its HTTP status comes from the code's spec row.

    Args:
        code: a code of `workbench.spec.ERRORS`.
        message: what went wrong, for a human; never a secret or a card number.
        headers: extra response headers (``Retry-After``...).
    """

    def __init__(self, code: str, message: str, *, headers: Mapping[str, str] | None = None):
        super().__init__(message)
        self.code = code
        self.message = message
        self.status = ERRORS[code].http_status
        self.headers = dict(headers or {})


def merchant_gone() -> ServiceError:
    """The refusal of a request whose merchant was deleted after its key was checked
    (``DELETE /sandbox/merchants/{id}`` while it was in flight): its key is no longer one
    of this environment, as the next request with it is told."""
    return ServiceError("SVC-GW-1003", "X-Api-Key is not a key of this environment")


def request_id_of(scope: Mapping[str, Any]) -> str:
    """The request id the request-id middleware put in the scope (or ``""``)."""
    state = (scope.get("state") or {}).get(STATE_KEY)
    return state.request_id if isinstance(state, RequestState) else ""


def envelope_bytes(code: str, message: str, request_id: str) -> bytes:
    """The serialised envelope."""
    body = {"code": code, "message": message, "requestId": request_id}
    return json.dumps(body, ensure_ascii=False).encode("utf-8")


def error_response(
    code: str, message: str, request_id: str, headers: Mapping[str, str] | None = None
) -> Response:
    """A JSON response carrying the envelope with the code's HTTP status.

    A 5xx also says ``Connection: close``, and the server closes after it: a kept-alive
    client then opens a fresh connection for its retry instead of writing it into one
    being torn down (a reset it could not tell from a lost request).
    """
    status = ERRORS[code].http_status
    all_headers = {"X-Request-Id": request_id, **(headers or {})}
    if status >= 500:
        all_headers["Connection"] = "close"
    return Response(
        envelope_bytes(code, message, request_id),
        status_code=status,
        media_type="application/json",
        headers=all_headers,
    )
