"""Why a request got no answer, or an answer that is not the API's, in words.

httpx2 raises ``ConnectError`` for a refused connection, an unknown host and TLS spoken
to a plain-HTTP server alike; the cause is in the exception's chain (``__cause__``):
`ConnectionRefusedError`, `socket.gaierror`, `ssl.SSLError`. `describe_failure` names
it with the address, and for the local sandbox says how to start it. A TLS failure is
`permanent`: the same request to the same address fails the same way, so it is not
retried.

`describe_foreign_body` tells an answer from something that is not the API (a web
server's HTML page, a proxy's text) by its body: the API answers JSON, errors included.
"""

from __future__ import annotations

import re
import socket
import ssl
from collections.abc import Iterator

import httpx2

__all__ = ["GATEWAY_STATUSES", "describe_failure", "describe_foreign_body", "permanent"]

#: Statuses that mean "later" from whatever stands in front of the API (a proxy while the
#: API restarts, a rate limiter): worth a retry even with a body that is not the API's.
GATEWAY_STATUSES = frozenset({408, 429, 502, 503, 504})

_LOCAL_HOSTS = frozenset({"127.0.0.1", "localhost", "::1"})
_SANDBOX_PORT = 8765
_TITLE = re.compile(r"<title[^>]*>\s*(.*?)\s*</title>", re.IGNORECASE | re.DOTALL)
#: What OpenSSL says when the other side answered TLS's hello in plain text.
_PLAIN_TEXT_REPLIES = ("WRONG_VERSION_NUMBER", "record layer failure", "packet length too long")


def _chain(exc: BaseException) -> Iterator[BaseException]:
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        yield current
        current = current.__cause__ or current.__context__


def _address(url: httpx2.URL) -> str:
    port = url.port or (443 if url.scheme == "https" else 80)
    host = f"[{url.host}]" if ":" in url.host else url.host
    return f"{host}:{port}"


def _start_hint(url: httpx2.URL) -> str:
    if url.host not in _LOCAL_HOSTS:
        return ""
    port = url.port or 80
    option = "" if port == _SANDBOX_PORT else f" --port {port}"
    return f"; is the local sandbox running? Start it with `workbench sandbox{option}`" + (
        " (`make sandbox` in a clone)" if not option else ""
    )


def permanent(exc: httpx2.TransportError) -> bool:
    """Whether retrying cannot help: a TLS handshake that failed (plain HTTP, a bad
    certificate) fails the same way every time."""
    return any(isinstance(cause, ssl.SSLError) for cause in _chain(exc))


def describe_failure(exc: httpx2.TransportError, url: httpx2.URL) -> str:
    """The cause of a request that got no answer, with the address it went to.

    Args:
        exc: what httpx2 raised.
        url: the request's address.

    Returns:
        For example ``connection refused by 127.0.0.1:8765; is the local sandbox
        running? ...`` or ``unknown host api.example (DNS has no address for it)``.
    """
    address = _address(url)
    for cause in _chain(exc):
        if isinstance(cause, ConnectionRefusedError):
            return f"connection refused by {address}{_start_hint(url)}"
        if isinstance(cause, socket.gaierror):
            return f"unknown host {url.host} (DNS has no address for it)"
        if isinstance(cause, ssl.SSLCertVerificationError):
            return f"the TLS certificate of {address} was refused: {cause.verify_message}"
        if isinstance(cause, ssl.SSLError):
            text = str(cause)
            if any(reply in text for reply in _PLAIN_TEXT_REPLIES):
                plain = url.copy_with(scheme="http").copy_with(path="", query=None)
                return (
                    f"TLS to {address} failed: the server there speaks plain HTTP; "
                    f"use {str(plain).rstrip('/')} (http://, not https://)"
                )
            return f"TLS to {address} failed: {cause.reason or text}"
        if isinstance(cause, ConnectionResetError):
            return f"{address} reset the connection"
        if isinstance(cause, TimeoutError | httpx2.TimeoutException):
            return f"no answer from {address} in time ({type(exc).__name__})"
    if isinstance(exc, httpx2.RemoteProtocolError):
        return f"{address} closed the connection without an HTTP answer ({exc})"
    return f"{type(exc).__name__} from {address}: {exc}"


def describe_foreign_body(response: httpx2.Response) -> str | None:
    """What answered, when the body is not the API's JSON; ``None`` when it is JSON.

    Args:
        response: the response to look at (its body already read).

    Returns:
        For example ``127.0.0.1:8000 answered HTTP 501 with an HTML page ("Error
        response"), not the API's JSON: is http://127.0.0.1:8000 the API's address?``.
    """
    try:
        response.json()
    except ValueError:
        pass
    else:
        return None
    try:
        url: httpx2.URL | None = response.request.url
    except RuntimeError:  # a response built by hand, without its request
        url = None
    media = response.headers.get("Content-Type", "").split(";")[0].strip().lower()
    text = response.text
    if not text.strip():
        what = "an empty body"
    elif media == "text/html" or text.lstrip()[:1] == "<":
        title = _TITLE.search(text)
        what = f'an HTML page ("{title[1][:80]}")' if title else "an HTML page"
    else:
        what = f"a {media} body" if media else "a body that is not JSON"
    head = f"{response.status_code} with {what}, not the API's JSON"
    if url is None:
        return f"the server answered HTTP {head}"
    origin = f"{url.scheme}://{_address(url)}"
    return f"{_address(url)} answered HTTP {head}: is {origin} the API's address?"
