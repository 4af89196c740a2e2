"""`CallLog`: what a notebook shows of the calls its cells made (rendering, not the lesson).

The cells call the client themselves; a `CallLog` watches that client and shows
the merchant's calls as a table, one request and its answer as JSON, and the
states an object went through. Sandbox control calls (``/sandbox/...``: the
clock, the reconciler, fixtures) are not the merchant's and are left out. Bodies
are redacted as in `FlowRun` (bearer values and secrets cut to a prefix).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from workbench.flows._diagram import StatePath
from workbench.flows._run import FlowRun

if TYPE_CHECKING:
    import pandas as pd

    from workbench._client import Client
    from workbench._response import ResponseInfo

__all__ = ["CallLog"]

_CONTROL_PREFIX = "/sandbox/"


class CallLog:
    """Watch ``client`` from now on and keep the merchant's calls for display.

    Example:
        >>> calls = CallLog(client)  # doctest: +SKIP
        >>> payment = client.payments.charge_card(...)  # doctest: +SKIP
        >>> calls.table()  # doctest: +SKIP
    """

    def __init__(self, client: Client) -> None:
        self._client = client
        self._run = FlowRun("calls", {})
        client.add_observer(self._observe)

    def _observe(self, info: ResponseInfo, body: Any) -> None:
        if info.path.startswith(_CONTROL_PREFIX):
            return
        self._run.tracker.observe(info, body)
        self._run._observe(info, body)

    def close(self) -> None:
        """Stop watching the client."""
        self._client.remove_observer(self._observe)

    def __len__(self) -> int:
        return len(self._run.calls)

    def table(self, object_id: str | None = None) -> pd.DataFrame:
        """The calls (only those on ``object_id``, if given): step, request, status, state."""
        frame = self._run.frame()
        if object_id is None:
            return frame
        steps = {
            i
            for i, record in enumerate(self._run.tracker.records, start=1)
            if record.object_id == object_id
        }
        return frame[frame["step"].isin(steps)].reset_index(drop=True)

    def exchange(self, step: int | None = None) -> str:
        """One call (default: the last) as its request and answer JSON, redacted."""
        return self._run.exchange(step)

    def states(self, object_id: str) -> list[str]:
        """The states ``object_id`` was seen in, in order."""
        return self._run.states(object_id)

    def path(self, object_id: str) -> StatePath:
        """The states ``object_id`` went through as a small diagram (SVG in a notebook)."""
        return self._run.state_path(object_id)

    def __repr__(self) -> str:
        return f"CallLog({len(self)} merchant calls)"
