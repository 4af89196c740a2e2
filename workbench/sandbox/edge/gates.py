"""What the per-key gates (rate limit, fail-next and latency) share: which requests they
gate, and how one refuses.

They gate a signed HTTP request outside the control routes (``/sandbox/...``, which a
merchant uses to set those very switches). A gate that lets a request through on a key
record the edge only guessed (PostgreSQL) leaves its check on the guess
(`KeyGuess.rechecks`, the guess as `gated` gives it), to be asked again should the guess prove stale
(`workbench.sandbox.context.Caller.settle`). A refusal made on a guess is never sent as
it is: the guess is confirmed first (`refusal_standing`), and when it was stale, the
request is settled on the fresh record, whose answer counts instead.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from workbench.sandbox.context import request_state

if TYPE_CHECKING:
    from starlette.types import Scope

    from workbench.sandbox.context import KeyGuess, Refusal, RequestState
    from workbench.sandbox.keys import KeyRecord
    from workbench.sandbox.storage import Database

__all__ = ["CONTROL_PREFIX", "gated", "refusal_standing"]

#: The control routes' prefix: no per-key gate applies there.
CONTROL_PREFIX = "/sandbox/"


def gated(scope: Scope) -> tuple[RequestState, KeyRecord, KeyGuess | None] | None:
    """The request's state, key record and the guess nobody confirmed yet (if the
    record is one) when the per-key gates apply, else ``None``.

    A gate that lets the request through on such a guess leaves its check on it
    (`KeyGuess.rechecks`), to be asked again with the fresh record (`Caller.settle`).
    """
    state = request_state(scope) if scope["type"] == "http" else None
    if state is None or state.key is None or str(scope["path"]).startswith(CONTROL_PREFIX):
        return None
    caller = state.caller
    guess = None if caller is None else caller.guess
    return state, state.key, None if guess is None or guess.confirmed else guess


async def refusal_standing(state: RequestState, refusal: Refusal, db: Database) -> Refusal | None:
    """The refusal to send for ``refusal``, made on the request's key record.

    On a guess nobody confirmed, the record is read first: when it is the same, the
    refusal stands; when it changed, the request is settled on the fresh record
    (`Caller.settle`, which asks this gate again too) and that answer counts: its
    refusal, or ``None`` to go on, the request state now holding the fresh caller.
    """
    caller = state.caller
    if caller is None or not caller.unconfirmed:
        return refusal
    stale = await caller.confirm_now(db)
    if stale is None:
        return refusal
    _, settled = await caller.settle(stale)
    return settled
