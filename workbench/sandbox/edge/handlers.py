"""The handlers that turn every failure FastAPI or Starlette raise into the error envelope.

Validation errors name the field and never echo the value sent (it may be a card
number); a 405 lists the path's methods (`allow`); an unexpected exception becomes
SVC-GW-5000 without a trace.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.responses import Response

from workbench.sandbox.edge import jsonbody
from workbench.sandbox.edge.allow import allow_header
from workbench.sandbox.errors import ServiceError, error_response, request_id_of
from workbench.sandbox.redaction import redact_path

__all__ = ["install_error_handlers", "validation_message"]

logger = logging.getLogger("workbench.sandbox")


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
