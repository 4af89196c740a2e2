"""`MerchantSwitches`: a merchant's pending fail-next switch and its simulated latency.

Set through the ``/sandbox/`` controls and kept on the merchant's row, read with its
key (`KeyRecord.fail_next`, `KeyRecord.latency_ms`). A pending fail-next is taken once,
by whichever request (on whichever worker) takes it first (the control feature's
`workbench.sandbox.control.service.consume_fail_next`), and answers for it: ``429``
SVC-GW-1004, ``timeout[:seconds]`` SVC-GW-5030 after the wait, anything else
SVC-GW-5000. Then the merchant's latency and the configured one are slept. The
``/sandbox/`` controls themselves are never delayed or failed.
"""

from __future__ import annotations

import asyncio
import functools
from typing import TYPE_CHECKING, Protocol

import anyio.to_thread
from starlette.types import ASGIApp, Receive, Scope, Send

from workbench.sandbox.edge.gates import gated
from workbench.sandbox.errors import error_response

if TYPE_CHECKING:
    from workbench.sandbox.context import Refusal
    from workbench.sandbox.keys import KeyRecord

__all__ = ["MerchantSwitches", "SwitchStore"]


class SwitchStore(Protocol):
    """What `MerchantSwitches` uses of the running sandbox, once started: the control
    feature's switch, taken through the composition root (the edge imports no feature)."""

    def consume_fail_next(self, merchant_id: str, mode: str) -> str | None:
        """Take the merchant's pending fail-next ``mode``, once; ``None`` if another took
        it. Blocking."""
        ...


async def _failure(mode: str) -> tuple[str, str, dict[str, str]]:
    if mode == "429":
        return "SVC-GW-1004", "rate limited (sandbox fail-next)", {"Retry-After": "1"}
    if mode.startswith("timeout"):
        seconds = float(mode.partition(":")[2] or "10")
        await asyncio.sleep(seconds)
        return "SVC-GW-5030", "timed out (sandbox fail-next)", {}
    return "SVC-GW-5000", "internal error (sandbox fail-next)", {}


class MerchantSwitches:
    """Answer a pending fail-next, then sleep the simulated latency, for signed requests.

    A record the edge only guessed (PostgreSQL) has no fail-next pending (the signature
    reads the row for one that had); should the guess prove stale, this layer is asked
    again with the fresh record (`KeyGuess.rechecks`): a fail-next set meanwhile answers,
    and the latency added meanwhile is slept.

    Args:
        app: the wrapped application.
        sandbox: the running sandbox's database.
        latency_ms: simulated latency added to every such request, besides the merchant's.
    """

    def __init__(self, app: ASGIApp, sandbox: SwitchStore, *, latency_ms: int = 0) -> None:
        self.app = app
        self.sandbox = sandbox
        self.latency_ms = latency_ms

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        found = gated(scope)
        if found is None:
            await self.app(scope, receive, send)
            return
        state, record, guess = found
        if guess is not None:  # asked again, the latency already slept is not slept twice
            guess.rechecks.append(functools.partial(self._switch, extra_ms=-record.latency_ms))
        refusal = await self._switch(record, extra_ms=self.latency_ms)
        if refusal is not None:
            code, message, headers = refusal
            await error_response(code, message, state.request_id, headers)(scope, receive, send)
            return
        await self.app(scope, receive, send)

    async def _switch(self, record: KeyRecord | None, *, extra_ms: int) -> Refusal | None:
        """Take ``record``'s pending fail-next and answer it, else sleep its latency plus
        ``extra_ms`` (the configured latency; less what was slept, when asked again)."""
        if record is None:  # the key is gone: the signature's own check refused it
            return None
        if record.fail_next is not None:
            mode = await anyio.to_thread.run_sync(
                self.sandbox.consume_fail_next, record.merchant_id, record.fail_next
            )
            if mode is not None:
                return await _failure(mode)
        delay = record.latency_ms + extra_ms
        if delay > 0:
            await asyncio.sleep(delay / 1000)
        return None
