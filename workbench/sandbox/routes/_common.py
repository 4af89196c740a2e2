"""What every router shares: documented error responses, base URLs, the raw path."""

from __future__ import annotations

from typing import Any

from fastapi import Request

from workbench.sandbox.context import base_url_of
from workbench.sandbox.runtime import Sandbox
from workbench.sandbox.schemas import ErrorEnvelope

__all__ = ["ERROR_RESPONSES", "PUBLIC_ERRORS", "SIGNED", "base_url", "checkout_base", "raw_path"]

_ENVELOPE: dict[str, Any] = {"model": ErrorEnvelope}
#: Error statuses any signed route may answer with, all in the envelope.
ERROR_RESPONSES: dict[int | str, dict[str, Any]] = {
    status: {**_ENVELOPE, "description": text}
    for status, text in (
        (400, "Validation failed or malformed request"),
        (401, "Authentication failed (SVC-GW-1001/1002/1003)"),
        (402, "Declined"),
        (404, "Not found for this merchant"),
        (405, "Method not allowed"),
        (409, "Idempotency or state conflict"),
        (413, "Body too large"),
        (429, "Rate limited (Retry-After)"),
        (500, "Internal error"),
        (503, "Unavailable"),
    )
}
PUBLIC_ERRORS: dict[int | str, dict[str, Any]] = {
    k: v for k, v in ERROR_RESPONSES.items() if k in (400, 404, 405, 409, 413, 500)
}
#: OpenAPI security requirement of signed routes.
SIGNED: list[dict[str, list[str]]] = [{"ApiKey": [], "Signature": [], "Timestamp": []}]


def base_url(request: Request, sandbox: Sandbox) -> str:
    """The address clients reach this sandbox at (the configured one, else the Host's)."""
    return base_url_of(request.scope, sandbox.config.public_base_url)


def checkout_base(request: Request, sandbox: Sandbox) -> str:
    """Where hosted checkout pages live."""
    return (sandbox.config.checkout_base_url or base_url(request, sandbox)).rstrip("/")


def raw_path(request: Request) -> str:
    """The path exactly as sent (the signature covered it)."""
    raw = request.scope.get("raw_path")
    return raw.decode("latin-1") if raw else request.url.path
