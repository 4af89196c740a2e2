"""httpx2 clients for the sandbox that sign every request with `workbench.signing`.

Shared by the sandbox tests (``tests/sandbox`` and its feature folders); its conftest
builds the ``client`` fixtures on them, and tests that start a sandbox of their own sign
with them too.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx2

from workbench.config import DEFAULT_API_KEY, DEFAULT_SECRET_KEY
from workbench.signing import sign_request

__all__ = ["Signer", "signed_client"]


class Signer(httpx2.Auth):
    """Signs each request over its exact body bytes with `workbench.signing`."""

    requires_request_body = True

    def __init__(self, api_key: str, secret_key: str) -> None:
        self.api_key = api_key
        self.secret_key = secret_key

    def auth_flow(self, request: httpx2.Request) -> Iterator[httpx2.Request]:
        headers = sign_request(
            api_key=self.api_key,
            secret_key=self.secret_key,
            method=request.method,
            url=str(request.url),
            body=request.content,
        )
        request.headers.update(headers.as_dict())
        yield request


def signed_client(
    base_url: str,
    api_key: str = DEFAULT_API_KEY,
    secret_key: str = DEFAULT_SECRET_KEY,
    **kwargs: Any,
) -> httpx2.Client:
    """An httpx2 client that signs every request.

    The sandbox is plain HTTP on 127.0.0.1: no certificate store is loaded (``verify``
    off), which costs httpx2 24 ms a client, and the tests make hundreds of them.
    """
    kwargs.setdefault("verify", False)
    return httpx2.Client(base_url=base_url, auth=Signer(api_key, secret_key), timeout=30, **kwargs)
