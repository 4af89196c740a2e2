"""One form builder over the flows: inputs, a Run button, and the request, response and states.

`flow_form` builds an ipywidgets form from a flow's `workbench.flows.Param` list
(amount in lira, test card picker, installments, 3-D Secure, capture...). Clicking
Run calls the flow with the form's values and shows the summary, the calls, the
state history and every request and response (folded) in the form's output area.
Run headless (nbval, the docs build, ``workbench run``) nobody clicks: the notebook
calls `FlowForm.run` once, which uses the form's values, i.e. the defaults.

Exceptions raised inside an ``on_click`` handler are swallowed by ipywidgets, so
the handler keeps its outcome on the form (`FlowForm.last`, `FlowForm.error`,
the status line), where tests and users can see it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import ipywidgets as w

from workbench._exceptions import WorkbenchError
from workbench.flows import FLOWS, FlowRun, FlowSpec, Param
from workbench.flows._catalogue import CARDS
from workbench.money import format_try, to_kurus

if TYPE_CHECKING:
    from workbench._client import Client

__all__ = ["FlowForm", "flow_form"]


def _lira_text(kurus: int) -> str:
    return format_try(kurus, symbol="").strip()


#: Room for a label and the widest value (a test card's name, a void reason) in full:
#: ipywidgets' own 300 px cut them ("approved (frictionless").
_FIELD = {"width": "100%", "max_width": "520px"}


def _control(param: Param) -> w.Widget:
    style = {"description_width": "140px"}
    label = {"description": param.label, "style": style, "layout": w.Layout(**_FIELD)}
    if param.kind == "lira":
        return w.Text(value=_lira_text(param.default), **label)
    if param.kind == "card":
        return w.Dropdown(options=CARDS, value=param.default, **label)
    if param.kind == "int":
        low, high = param.options or (0, 10**6)
        return w.BoundedIntText(value=param.default, min=low, max=high, **label)
    if param.kind == "bool":
        return w.Checkbox(value=param.default, description=param.label, indent=False)
    if param.kind == "choice":
        return w.ToggleButtons(options=list(param.options), value=param.default,
                               description=param.label, style=style)  # fmt: skip
    return w.Text(value=str(param.default), **label)


class FlowForm:
    """A form for one flow: a control per parameter, a Run button, a status line, an output.

    Attributes:
        spec: the flow.
        controls: the input widgets, by parameter name.
        button: the Run button.
        status: a one-line outcome of the last click.
        output: where the last run's request, response and states are shown.
        last: the last successful run (``None`` before one).
        error: the last click's error message (``None`` when it succeeded).
        widget: the whole form, for ``display``.
    """

    def __init__(self, spec: FlowSpec, client: Client | None = None) -> None:
        self.spec = spec
        self._client = client
        self.controls: dict[str, w.Widget] = {p.name: _control(p) for p in spec.params}
        # As wide as its words ("Run: Preauthorization" was cut at ipywidgets' 148 px).
        self.button = w.Button(description=f"Run: {spec.title}", button_style="primary",
                               icon="play", layout=w.Layout(width="max-content",
                                                            max_width="100%"))  # fmt: skip
        self.status = w.HTML(value="")
        self.output = w.Output()
        self.last: FlowRun | None = None
        self.error: str | None = None
        self.runs = 0
        self.button.on_click(self._on_click)
        self.widget = w.VBox([*self.controls.values(), self.button, self.status, self.output])

    @property
    def client(self) -> Client:
        """The client the flow runs with (made from ``WORKBENCH_*`` settings when not given)."""
        if self._client is None:
            from workbench._client import Client

            self._client = Client()
        return self._client

    def values(self) -> dict[str, Any]:
        """The form's values in the flow's terms (lira text becomes integer kuruş).

        Raises:
            ValueError: an amount is not a lira amount.
        """
        values: dict[str, Any] = {}
        for param in self.spec.params:
            value = self.controls[param.name].value
            if param.kind == "lira":
                value = to_kurus(str(value))
            values[param.name] = value
        return values

    def set(self, **values: Any) -> FlowForm:
        """Set controls by parameter name (amounts as kuruş or as lira text)."""
        for name, value in values.items():
            param = next(p for p in self.spec.params if p.name == name)
            if param.kind == "lira" and isinstance(value, int):
                value = _lira_text(value)
            self.controls[name].value = value
        return self

    def run(self) -> FlowRun:
        """Run the flow once with the form's current values and return its record."""
        run = self.spec(self.client, **self.values())
        self.last = run
        self.runs += 1
        return run

    def _on_click(self, _button: w.Button) -> None:
        self.error = None
        try:
            run = self.run()
        except (ValueError, WorkbenchError) as exc:
            self.error = str(exc)
            self.status.value = f"<b>Not run</b>: {_html(self.error)}"
            return
        self.status.value = f"Ran {self.spec.name}: {len(run.calls)} requests"
        self._show(run)

    def _show(self, run: FlowRun) -> None:
        from IPython.display import display

        self.output.clear_output()
        with self.output:
            print(run.summary())
            display(run.frame())  # type: ignore[no-untyped-call]
            display(run.state_path())  # type: ignore[no-untyped-call]
            if run.calls:
                display(run.exchanges())  # type: ignore[no-untyped-call]

    def describe(self) -> str:
        """The form as one line of text: what a page without a kernel shows in its place."""
        values = ", ".join(f"{p.label}={self.controls[p.name].value}" for p in self.spec.params)
        return f"Form: {self.spec.title} ({values}); interactive in JupyterLab (make lab)"

    def _ipython_display_(self) -> None:
        from IPython.display import display

        bundle = dict(self.widget._repr_mimebundle_() or {})
        bundle["text/plain"] = self.describe()
        display(bundle, raw=True)  # type: ignore[no-untyped-call]

    def __repr__(self) -> str:
        return f"FlowForm({self.spec.name!r}, runs={self.runs})"


def _html(text: str) -> str:
    from html import escape

    return escape(text)


def flow_form(flow: str, client: Client | None = None, **defaults: Any) -> FlowForm:
    """Build the form of a flow (``quickstart``, ``card_3ds``, ``preauth``, ``refunds``...).

    Args:
        flow: the flow's name in `workbench.flows.FLOWS`.
        client: the client to run with (default: one made from ``WORKBENCH_*`` settings).
        **defaults: starting values for some controls (amounts in kuruş).

    Raises:
        KeyError: no such flow.
    """
    try:
        spec = FLOWS[flow]
    except KeyError:
        raise KeyError(f"no flow {flow!r}; known: {', '.join(FLOWS)}") from None
    return FlowForm(spec, client).set(**defaults)
