"""The error envelope ``{"code", "message", "requestId"}`` and the handlers that produce it.

Every failure leaves the sandbox in this envelope with the status `workbench.spec.ERRORS`
gives its code: validation errors name the field, never echo the value sent (it may be
a card number), and an unexpected exception becomes SVC-GW-5000 without a trace.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping, Sequence
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.responses import Response

from workbench.sandbox import jsonbody
from workbench.sandbox.allow import allow_header
from workbench.sandbox.context import STATE_KEY, RequestState
from workbench.sandbox.redaction import redact_path
from workbench.spec import ERRORS

__all__ = [
    "ServiceError",
    "envelope_bytes",
    "error_response",
    "install_error_handlers",
    "request_id_of",
    "validation_message",
]

logger = logging.getLogger("workbench.sandbox")


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


def _field_name(loc: Sequence[int | str]) -> str:
    parts = [str(p) for p in loc if p not in ("body", "query", "path", "header")]
    return ".".join(parts) or "body"


_TYPE_HINTS = {
    "extra_forbidden": "unknown field",
    "missing": "required field is missing",
}


def validation_message(
    errors: Sequence[Mapping[str, Any]], content_type: str | None = None
) -> tuple[str, str]:
    """Turn pydantic errors into (code, message) naming every offending field.

    A body that is not JSON, not a JSON object, or not sent as JSON (``content_type``,
    the request's Content-Type, says so) is SVC-GW-4000; anything else is
    SVC-VAL-4001. The input values are left out on purpose.
    """
    for err in errors:
        loc = tuple(err.get("loc", ()))
        if err.get("type") == "json_invalid":
            return "SVC-GW-4000", "request body is not valid JSON"
        if loc in (("body",), ()) and err.get("type") in ("model_attributes_type", "dict_type"):
            if content_type and not jsonbody.is_json(content_type):
                sent = content_type.split(";", 1)[0].strip()[:100]
                return (
                    "SVC-GW-4000",
                    f"Content-Type {sent!r} is not accepted: send the JSON body "
                    "with Content-Type: application/json",
                )
            return "SVC-GW-4000", "request body must be a JSON object"
        if loc == ("body",) and err.get("type") == "missing":
            return "SVC-GW-4000", "request body is required (send {} when there are no fields)"
    parts = []
    for err in errors:
        field = _field_name(err.get("loc", ()))
        kind = str(err.get("type", ""))
        text = _TYPE_HINTS.get(kind) or str(err.get("msg", "invalid value"))
        if kind.startswith("value_error"):
            text = text.removeprefix("Value error, ")
        parts.append(f"{field}: {text}")
    return "SVC-VAL-4001", "; ".join(parts)


def install_error_handlers(app: FastAPI) -> None:
    """Route every failure FastAPI or Starlette can raise into the envelope."""

    async def service_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, ServiceError)
        return error_response(exc.code, exc.message, request_id_of(request.scope), exc.headers)

    async def invalid(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, RequestValidationError)
        code, message = validation_message(exc.errors(), request.headers.get("content-type"))
        return error_response(code, message, request_id_of(request.scope))

    async def http_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, StarletteHTTPException)
        rid = request_id_of(request.scope)
        if exc.status_code == 405:
            allow = {"Allow": allow_header(request.app.router.routes, request.scope)}
            return error_response("SVC-GW-4005", "method not allowed on this route", rid, allow)
        if exc.status_code == 404:
            return error_response("SVC-GW-4004", "no such route", rid)
        return error_response("SVC-GW-4000", str(exc.detail), rid)

    async def unexpected(request: Request, exc: Exception) -> Response:
        rid = request_id_of(request.scope)
        path = redact_path(request.url.path)
        logger.error("unhandled %s on %s (request %s)", type(exc).__name__, path, rid)
        return error_response("SVC-GW-5000", "internal error; quote the requestId", rid)

    app.add_exception_handler(ServiceError, service_error)
    app.add_exception_handler(RequestValidationError, invalid)
    app.add_exception_handler(StarletteHTTPException, http_error)
    app.add_exception_handler(Exception, unexpected)
