"""What every router shares: its dependencies, documented errors, the checkout base, the raw path.

Part of the edge (it reaches the `SandboxRuntime`): only route modules import it.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Depends, Header, Request

from workbench.sandbox.bodies import ErrorEnvelope
from workbench.sandbox.context import Caller, caller_of
from workbench.sandbox.runtime import SandboxRuntime, base_url, sandbox_of

__all__ = [
    "CHARGE_ERRORS",
    "ERROR_RESPONSES",
    "PUBLIC_ERRORS",
    "SIGNED",
    "CallerDep",
    "IdemKey",
    "SandboxDep",
    "checkout_base",
    "raw_path",
]

#: The running sandbox (`runtime.sandbox_of`).
SandboxDep = Annotated[SandboxRuntime, Depends(sandbox_of)]
#: Who signed the request (`context.caller_of`).
CallerDep = Annotated[Caller, Depends(caller_of)]
#: The ``Idempotency-Key`` header, if sent.
IdemKey = Annotated[str | None, Header(alias="Idempotency-Key", max_length=255)]

_ENVELOPE: dict[str, Any] = {"model": ErrorEnvelope}
#: Error statuses any signed route may answer with, all in the envelope.
ERROR_RESPONSES: dict[int | str, dict[str, Any]] = {
    status: {**_ENVELOPE, "description": text}
    for status, text in (
        (400, "Validation failed, malformed or too large, or declined (SVC-PAY-3xxx)"),
        (401, "Authentication failed (SVC-GW-1001/1002/1003)"),
        (404, "Not found for this merchant"),
        (405, "Method not allowed"),
        (409, "Idempotency or state conflict"),
        (429, "Rate limited (Retry-After)"),
        (500, "Internal error"),
        (503, "Unavailable"),
    )
}
PUBLIC_ERRORS: dict[int | str, dict[str, Any]] = {
    k: v for k, v in ERROR_RESPONSES.items() if k in (400, 404, 405, 409, 500)
}
#: The card charge's error statuses: exactly the spec's list (409 from its idempotency rules).
CHARGE_ERRORS: dict[int | str, dict[str, Any]] = {
    **{k: v for k, v in ERROR_RESPONSES.items() if k in (400, 401, 404, 429)},
    409: {**_ENVELOPE, "description": "Idempotency conflict (SVC-GW-2001, SVC-GW-2002)"},
}
#: OpenAPI security requirement of signed routes.
SIGNED: list[dict[str, list[str]]] = [{"ApiKey": [], "Signature": [], "Timestamp": []}]


def checkout_base(request: Request, sandbox: SandboxRuntime) -> str:
    """Where hosted checkout pages live."""
    return (sandbox.config.checkout_base_url or base_url(request, sandbox)).rstrip("/")


def raw_path(request: Request) -> str:
    """The path exactly as sent (the signature covered it)."""
    raw = request.scope.get("raw_path")
    return raw.decode("latin-1") if raw else request.url.path
