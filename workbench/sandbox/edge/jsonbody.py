"""The one rule for reading a JSON request body: standard JSON, and no key twice.

JSON itself leaves duplicate names to the reader, and Python's reader keeps the last
one: ``{"cardToken": "tok_a", "cardToken": "tok_b"}`` would charge ``tok_b`` while a
log or a proxy that keeps the first shows ``tok_a``. The sandbox refuses such a body
on every JSON route, naming the key. `DuplicateKeys` applies the rule once per
request, before any route sees the body.
"""

from __future__ import annotations

import json
from typing import Any

from starlette.types import ASGIApp, Receive, Scope, Send

from workbench.sandbox.context import request_header, request_state
from workbench.sandbox.errors import error_response

__all__ = ["DuplicateKeyError", "DuplicateKeys", "is_json", "loads", "refusal"]


class DuplicateKeyError(ValueError):
    """A JSON object in the body names ``key`` more than once."""

    def __init__(self, key: str) -> None:
        super().__init__(f"the key {key!r} appears more than once")
        self.key = key


def _unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj = dict(pairs)
    if len(obj) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise DuplicateKeyError(key)
            seen.add(key)
    return obj


_DECODER = json.JSONDecoder(object_pairs_hook=_unique)


def loads(raw: bytes | str) -> Any:
    """Parse a request body.

    Raises:
        DuplicateKeyError: an object names a key twice (at any depth).
        ValueError: the text is not JSON (`json.JSONDecodeError`).
        RecursionError: nesting too deep to parse.
    """
    if isinstance(raw, str):
        return json.loads(raw, object_pairs_hook=_unique)
    # What json.loads does with bytes, on one decoder made once (it made one per call).
    return _DECODER.decode(raw.decode(json.detect_encoding(raw), "surrogatepass"))


def is_json(content_type: str | None) -> bool:
    """Whether a Content-Type announces JSON (``application/json`` or ``…+json``)."""
    if not content_type:
        return False
    kind = content_type.split(";", 1)[0].strip().lower()
    return kind == "application/json" or (
        kind.startswith("application/") and kind.endswith("+json")
    )


def refusal(scope: Scope, body: bytes) -> tuple[str, str] | None:
    """``(code, message)`` when a JSON body names a key twice, else ``None``.

    The parsed body is kept in the request state (`RequestState.json`) for the card charge.
    What does not parse at all is left to the route, which says it is not valid JSON.
    """
    if not body or not is_json(request_header(scope, b"content-type")):
        return None
    try:
        parsed = loads(body)
    except DuplicateKeyError as exc:
        message = f'the JSON body names "{exc.key}" more than once; send each key once'
        return "SVC-GW-4000", message
    except (ValueError, RecursionError):
        return None
    request_state(scope).json = parsed
    return None


class DuplicateKeys:
    """Refuse (400 SVC-GW-4000) a JSON body naming a key twice; keep the parsed body.

    The last layer before the routes, on every route, signed or not.

    Args:
        app: the wrapped application.
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            state = request_state(scope)
            refused = refusal(scope, state.body)
            if refused is not None:
                await error_response(*refused, state.request_id)(scope, receive, send)
                return
        await self.app(scope, receive, send)
