"""`CallLog`: what a notebook shows of the calls its cells made (rendering, not the lesson).

The cells call the client themselves; a `CallLog` watches that client and, in a
notebook, folds each cell's calls under the cell as they went over the wire
(request and response, `workbench.flows._http`). It also shows the merchant's calls
as a table, one request and its answer as JSON, and the states an object went
through. Sandbox control calls (``/sandbox/...``: the clock, the reconciler,
fixtures) are not the merchant's and are left out. Bodies are redacted as in
`FlowRun` (bearer values and secrets cut to a prefix).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from workbench.flows._diagram import StatePath
from workbench.flows._http import Exchanges
from workbench.flows._run import FlowRun

if TYPE_CHECKING:
    import httpx2
    import pandas as pd

    from workbench._client import Client
    from workbench._response import ResponseInfo

__all__ = ["CallLog"]

_CONTROL_PREFIX = "/sandbox/"
#: The `CallLog` whose cell hooks are registered, per IPython shell: a notebook that
#: makes a second one (its first cell run again) shows each call once, not twice.
_SHOWING: dict[int, CallLog] = {}


class CallLog:
    """Watch ``client`` from now on and keep the merchant's calls for display.

    Example:
        ```python
        calls = CallLog(client)
        payment = client.payments.charge_card(...)
        calls.table()
        ```
    """

    def __init__(self, client: Client, *, under_cells: bool = True) -> None:
        """Watch ``client``.

        Args:
            client: the client the cells call.
            under_cells: in an IPython kernel, fold each cell's calls under it.
        """
        self._client = client
        # The client's settings: each call links to its page in the local sandbox's dashboard.
        self._run = FlowRun("calls", {}, settings=client._settings)
        self._cell_start = 0
        self._shell: Any = None
        client.add_observer(self._observe)
        if under_cells:
            self._show_under_cells()

    def _show_under_cells(self) -> None:
        try:
            from IPython import get_ipython
        except ImportError:  # pragma: no cover - IPython is a dependency of the notebooks
            return
        shell = get_ipython()
        if shell is None:
            return
        previous = _SHOWING.pop(id(shell), None)
        if previous is not None:
            previous._stop_showing()
        self._shell = shell
        _SHOWING[id(shell)] = self
        shell.events.register("pre_run_cell", self._cell_starts)
        shell.events.register("post_run_cell", self._cell_ends)

    def _stop_showing(self) -> None:
        if self._shell is None:
            return
        self._shell.events.unregister("pre_run_cell", self._cell_starts)
        self._shell.events.unregister("post_run_cell", self._cell_ends)
        if _SHOWING.get(id(self._shell)) is self:
            del _SHOWING[id(self._shell)]
        self._shell = None

    def _cell_starts(self, *_info: object) -> None:
        self._cell_start = len(self._run.calls)

    def _cell_ends(self, *_result: object) -> None:
        made = self._run.calls[self._cell_start :]
        self._cell_start = len(self._run.calls)
        if made:
            from IPython.display import display

            display(Exchanges(made))  # type: ignore[no-untyped-call]

    def record(self, response: httpx2.Response) -> None:
        """Show a call made without the client (plain ``httpx2``) with the others.

        It is folded under the cell as the client's calls are, and listed in `table`
        (without a state: the client did not read it).
        """
        self._run.record_response(response)

    def since(self, step: int = 0) -> Exchanges:
        """The calls after the first ``step`` ones, shown as they went over the wire."""
        return Exchanges(self._run.calls[step:])

    def _observe(self, info: ResponseInfo, body: Any) -> None:
        if info.path.startswith(_CONTROL_PREFIX):
            return
        self._run.tracker.observe(info, body)
        self._run._observe(info, body)

    def close(self) -> None:
        """Stop watching the client (and showing calls under cells)."""
        self._client.remove_observer(self._observe)
        self._stop_showing()

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
