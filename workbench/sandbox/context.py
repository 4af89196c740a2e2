"""What a request carries for the code that serves it: the authenticated caller, its address."""

from __future__ import annotations

from dataclasses import dataclass

from fastapi import Request
from starlette.types import Scope

from workbench.sandbox.errors import ServiceError, request_id_of

__all__ = ["Caller", "base_url_of", "caller_of"]


@dataclass(frozen=True, slots=True)
class Caller:
    """The merchant a signed request authenticated as.

    Attributes:
        api_key: the public key it signed with.
        merchant_id: its merchant.
        store_id: the store the key belongs to.
        request_id: this request's id.
    """

    api_key: str
    merchant_id: str
    store_id: str
    request_id: str


# The dependencies are ``async`` so FastAPI calls them on the loop: it would hand a plain
# function to a worker thread, two thread switches per dependency per request.
async def caller_of(request: Request) -> Caller:
    """The authenticated caller (a FastAPI dependency); public routes have none."""
    caller = (request.scope.get("state") or {}).get("caller")
    if not isinstance(caller, Caller):
        raise ServiceError("SVC-GW-1003", "X-Api-Key is missing")
    return caller


async def request_id(request: Request) -> str:
    """This request's id (a FastAPI dependency)."""
    return request_id_of(request.scope)


def base_url_of(scope: Scope, configured: str | None) -> str:
    """The address clients reach this sandbox at: ``configured``, else the bound address.

    Never the request's ``Host`` header: it is not signed, and a ``checkoutUrl`` or a
    redirect built from it would send a buyer wherever the request said.
    """
    if configured:
        return configured.rstrip("/")
    host, port = scope.get("server") or ("127.0.0.1", 80)
    name = f"[{host}]" if ":" in str(host) else str(host)
    root = scope.get("root_path", "")
    return f"{scope.get('scheme', 'http')}://{name}:{port}{root}".rstrip("/")
