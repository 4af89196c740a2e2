"""What the per-key gates (rate limit, fail-next and latency) share: which requests they
gate, and how one refuses.

They gate a signed HTTP request outside the control routes (``/sandbox/...``, which a
merchant uses to set those very switches). A refusal made on a key record the edge only
guessed (PostgreSQL) is never sent: `StaleKey` has the request authenticated again from
the database first.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from workbench.sandbox.context import request_state
from workbench.sandbox.errors import error_response
from workbench.sandbox.keys import StaleKey

if TYPE_CHECKING:
    from collections.abc import Mapping

    from starlette.types import Receive, Scope, Send

    from workbench.sandbox.context import RequestState
    from workbench.sandbox.keys import KeyRecord

__all__ = ["CONTROL_PREFIX", "gated", "refuse"]

#: The control routes' prefix: no per-key gate applies there.
CONTROL_PREFIX = "/sandbox/"


def gated(scope: Scope) -> tuple[RequestState, KeyRecord] | None:
    """The request's state and key record when the per-key gates apply, else ``None``."""
    state = request_state(scope) if scope["type"] == "http" else None
    if state is None or state.key is None or str(scope["path"]).startswith(CONTROL_PREFIX):
        return None
    return state, state.key


async def refuse(
    state: RequestState,
    code: str,
    message: str,
    headers: Mapping[str, str] | None,
    scope: Scope,
    receive: Receive,
    send: Send,
) -> None:
    """Answer ``code`` in the envelope.

    Raises:
        StaleKey: the caller's key record is a guess nobody confirmed yet.
    """
    if state.caller is not None and state.caller.unconfirmed:
        raise StaleKey
    await error_response(code, message, state.request_id, headers)(scope, receive, send)
