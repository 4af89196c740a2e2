"""Comparison: two targets' records of the same flows, step by step, after normalisation.

Steps are aligned by request (method and path shape, ids as their kind), so an extra or
a missing call shows as one step only in A or only in B rather than shifting every
step after it. For each aligned pair the HTTP status, the headers that matter and the
body are compared: field sets, field types, states (``status`` fields), error codes and
money exactly; ids by identity (the same id on one side must be the same id on the
other); the human ``message`` of an error by type only. A control route's answer
(``/sandbox/…``) describes the sandbox's own bookkeeping, whose values depend on what
else the sandbox holds, so only its status, fields and types are compared. Lists are
aligned too (by each item's ``type`` when it has one): a dropped event is one item only
in A.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from difflib import SequenceMatcher
from typing import Any, Literal

from workbench.parity._model import Exchange, FlowRecord, Recording
from workbench.parity._normalise import Normaliser, Placeholder, Text, render

__all__ = ["Difference", "FlowResult", "ParityReport", "Step", "compare", "compare_flow"]

Outcome = Literal["same", "differs", "only in A", "only in B", "skipped"]

#: Fields holding human wording, compared by type only.
WORDING_FIELDS = frozenset({"message"})
#: The headers that matter, as recorded.
_HEADERS = (("X-Request-Id", "request_id"), ("Idempotent-Replayed", "replayed"),
            ("Retry-After", "retry_after"))  # fmt: skip
_NONE = "—"


def _is_money(name: str | None) -> bool:
    lowered = (name or "").lower()
    return "amount" in lowered or lowered == "commission"


@dataclass(frozen=True, slots=True)
class Difference:
    """One thing that differs between A and B.

    Attributes:
        flow: the flow's name.
        step_a: the step's number on A (``None``: not a step, or only in B).
        step_b: the step's number on B (``None``: not a step, or only in A).
        request: the step's request (``POST /v1/payments/<pay:1>/capture``), ``""`` for
            the flow as a whole.
        kind: ``HTTP status``, ``state``, ``error code``, ``money``, ``value``, ``type``,
            ``identity``, ``header``, ``field name``, ``field only in A``, ``field only in
            B``, ``item only in A``, ``item only in B``, ``step only in A``, ``step only in
            B``, ``states``, ``stopped`` or ``params``.
        field: where: a body field (``lastRefund.amount``, ``items[1]``), ``HTTP status``,
            ``header X-Request-Id``, ``path``, or the flow-level item.
        a: A's value, normalised (``—`` when A has none).
        b: B's value, normalised.
    """

    flow: str
    step_a: int | None
    step_b: int | None
    request: str
    kind: str
    field: str
    a: str
    b: str

    @property
    def step(self) -> str:
        """The step as the report shows it: ``3``, or ``3/4`` when A and B number it apart."""
        if self.step_a is None and self.step_b is None:
            return ""
        if self.step_a == self.step_b:
            return str(self.step_a)
        return f"{self.step_a or _NONE}/{self.step_b or _NONE}"

    def describe(self) -> str:
        """One line: flow, step, request, field, kind, both values."""
        where = f" step {self.step} {self.request}" if self.step else ""
        what = self.field if self.kind == self.field else f"{self.field} ({self.kind})"
        return f"{self.flow}{where}: {what}: A {self.a}, B {self.b}"


@dataclass(frozen=True, slots=True)
class Step:
    """One step of a flow as compared.

    Attributes:
        step_a: its number among A's exchanges (``None`` if only in B).
        step_b: its number among B's exchanges (``None`` if only in A).
        request: the request, normalised.
        outcome: ``same``, ``differs``, ``only in A``, ``only in B`` or ``skipped``.
        status_a: A's HTTP status.
        status_b: B's HTTP status.
        differences: what differs (empty unless ``differs`` or only on one side).
        reason: why it was skipped.
        observed: the events read parity makes after a flow, not a call of the flow.
    """

    step_a: int | None
    step_b: int | None
    request: str
    outcome: Outcome
    status_a: int | None = None
    status_b: int | None = None
    differences: tuple[Difference, ...] = ()
    reason: str = ""
    observed: bool = False


@dataclass(frozen=True, slots=True)
class FlowResult:
    """One flow compared: its steps, what differs, and notes on what could not be compared.

    Attributes:
        name: the flow's name.
        steps: every step, aligned.
        differences: every difference, the flow-level ones (states, stopped) included.
        notes: why steps or the whole flow were skipped.
        steps_a: how many exchanges A made.
        steps_b: how many exchanges B made.
    """

    name: str
    steps: tuple[Step, ...]
    differences: tuple[Difference, ...]
    notes: tuple[str, ...] = ()
    steps_a: int = 0
    steps_b: int = 0

    def count(self, outcome: Outcome) -> int:
        """How many steps had ``outcome``."""
        return sum(1 for s in self.steps if s.outcome == outcome)

    @property
    def result(self) -> str:
        """``same``, ``N differences``, or ``skipped`` when nothing could be compared."""
        if self.differences:
            n = len(self.differences)
            return f"{n} difference{'s' if n != 1 else ''}"
        if not any(s.outcome != "skipped" for s in self.steps):
            return "skipped"
        return "same"


@dataclass(frozen=True, slots=True)
class ParityReport:
    """Every flow compared between A and B.

    Attributes:
        a: what A was.
        b: what B was.
        flows: one result per flow, in the order they ran.
    """

    a: str
    b: str
    flows: tuple[FlowResult, ...]

    @property
    def differences(self) -> list[Difference]:
        """Every difference, flow by flow."""
        return [d for f in self.flows for d in f.differences]

    @property
    def skipped(self) -> int:
        """How many steps were skipped (each with its reason)."""
        return sum(f.count("skipped") for f in self.flows)

    @property
    def ok(self) -> bool:
        """Whether nothing differed."""
        return not self.differences


@dataclass(slots=True)
class _Side:
    """One side's record of a flow, its exchanges normalised."""

    record: FlowRecord
    normaliser: Normaliser = field(default_factory=Normaliser)
    paths: list[Text] = field(default_factory=list)
    request_ids: list[Text | None] = field(default_factory=list)
    responses: list[Any] = field(default_factory=list)
    retried: list[bool] = field(default_factory=list)

    @classmethod
    def of(cls, record: FlowRecord) -> _Side:
        side = cls(record)
        norm = side.normaliser
        for e in record.exchanges:
            side.paths.append(norm.text(e.path))
            side.request_ids.append(
                norm.text(e.request_id, "X-Request-Id") if e.request_id is not None else None
            )
            side.responses.append(norm.json(e.response))
        pairs = zip(record.exchanges, record.exchanges[1:], strict=False)
        side.retried = [_is_retried(e, after) for e, after in pairs] + [False]
        return side

    @property
    def exchanges(self) -> Sequence[Exchange]:
        return self.record.exchanges

    def request(self, i: int) -> str:
        e = self.exchanges[i]
        tail = " (events read by parity)" if e.observed else ""
        tail += " (an attempt the client retried)" if self.retried[i] else ""
        return f"{e.method} {self.paths[i]}{tail}"

    def key(self, i: int) -> str:
        e = self.exchanges[i]
        return f"{e.method} {self.paths[i].shape} {e.observed} {self.retried[i]}"

    def reason(self, *, shape: bool = False) -> str:
        """Why the flow stopped, its ids normalised (``""`` if it ran to its end)."""
        if self.record.stopped is None:
            return ""
        text = self.normaliser.text(self.record.stopped.reason)
        return text.shape if shape else str(text)

    def stop(self) -> str:
        stopped = self.record.stopped
        if stopped is None:
            return "ran to its end"
        return f"stopped at step {stopped.step}: {self.reason()}"


def _is_retried(exchange: Exchange, after: Exchange) -> bool:
    """Whether ``exchange`` is an attempt the client retried: a ``408``, ``429`` or ``5xx``
    followed by the same request.

    Aligned apart from the answer of the call it was retried for, a retry made on one side
    only (a ``429`` under load) is one step only there, whatever its neighbours are.
    """
    retryable = exchange.status in (408, 429) or exchange.status >= 500
    same = (after.method, after.path, after.observed) == (exchange.method, exchange.path, False)
    return retryable and not exchange.observed and same


def _type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, Text):
        return "string"
    if isinstance(value, dict):
        return "object"
    if isinstance(value, list):
        return "array"
    return type(value).__name__


def _shape(value: Any) -> Any:
    """A hashable view of a normalised value with placeholders by kind only."""
    if isinstance(value, Text):
        return ("text", value.shape)
    if isinstance(value, dict):
        return tuple((k, _shape(v)) for k, v in value.items())
    if isinstance(value, list):
        return ("list", tuple(_shape(v) for v in value))
    return (_type(value), value)


def _item_key(value: Any, values: bool) -> Any:
    """What list items are aligned by: an object's ``type``, a scalar's value."""
    if isinstance(value, dict):
        return ("object", _shape(value.get("type")))
    if not values:
        return (_type(value),)
    return _shape(value)


def _child(where: str, name: str) -> str:
    return f"{where}.{name}" if where else name


class _FlowComparison:
    """Compares one flow's steps, keeping which A placeholder stands for which B one."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._a_to_b: dict[Placeholder, Placeholder] = {}
        self._b_to_a: dict[Placeholder, Placeholder] = {}
        self._found: list[Difference] = []
        self._step: tuple[int | None, int | None, str] = (None, None, "")

    def _add(self, kind: str, where: str, a: str, b: str) -> None:
        step_a, step_b, request = self._step
        self._found.append(Difference(self.name, step_a, step_b, request, kind, where, a, b))

    def flow_level(self, kind: str, where: str, a: str, b: str) -> Difference:
        """A difference about the flow as a whole."""
        return Difference(self.name, None, None, "", kind, where, a, b)

    def exchange(self, a: _Side, i: int, b: _Side, j: int) -> tuple[Difference, ...]:
        """What differs between A's step ``i`` and B's step ``j`` (0-based)."""
        self._found = []
        self._step = (i + 1, j + 1, a.request(i))
        ea, eb = a.exchanges[i], b.exchanges[j]
        values = ea.observed or not ea.control
        if ea.status != eb.status:
            self._add("HTTP status", "HTTP status", str(ea.status), str(eb.status))
        self._text("path", a.paths[i], b.paths[j], None)
        self._header("X-Request-Id", a.request_ids[i], b.request_ids[j], values)
        for name, attribute in _HEADERS[1:]:
            va, vb = getattr(ea, attribute), getattr(eb, attribute)
            if (va is None) != (vb is None) or (values and va != vb):
                self._add("header", f"header {name}", va or _NONE, vb or _NONE)
        self._json("", a.responses[i], b.responses[j], values, None)
        return tuple(self._found)

    def only(self, side: _Side, i: int, label: Literal["A", "B"]) -> Difference:
        """The difference a step made on one side only is."""
        shown = str(side.exchanges[i].status)
        on_a = label == "A"
        return Difference(
            self.name,
            step_a=i + 1 if on_a else None,
            step_b=None if on_a else i + 1,
            request=side.request(i),
            kind=f"step only in {label}",
            field="step",
            a=shown if on_a else _NONE,
            b=_NONE if on_a else shown,
        )

    def _header(self, name: str, a: Text | None, b: Text | None, values: bool) -> None:
        if (a is None) != (b is None):
            self._add("header", f"header {name}", render(a) if a else _NONE,
                      render(b) if b else _NONE)  # fmt: skip
        elif a is not None and b is not None and values:
            self._text(f"header {name}", a, b, None)

    def _json(self, where: str, a: Any, b: Any, values: bool, name: str | None) -> None:
        ta, tb = _type(a), _type(b)
        if ta != tb:
            self._add("type", where or "body", f"{ta} {render(a)}", f"{tb} {render(b)}")
            return
        if ta == "object":
            self._object(where, a, b, values)
        elif ta == "array":
            self._array(where, a, b, values)
        elif not values or name in WORDING_FIELDS:
            return
        elif ta == "string":
            self._text(where or "body", a, b, name)
        elif a != b:
            kind = "money" if ta == "integer" and _is_money(name) else "value"
            self._add(kind, where or "body", render(a), render(b))

    def _object(self, where: str, a: dict[str, Any], b: dict[str, Any], values: bool) -> None:
        only_a = [k for k in a if k not in b]
        only_b = [k for k in b if k not in a]
        for ka in list(only_a):
            renamed = next((kb for kb in only_b if _shape(a[ka]) == _shape(b[kb])), None)
            if renamed is not None:
                self._add("field name", _child(where, ka), ka, renamed)
                only_a.remove(ka)
                only_b.remove(renamed)
        for ka in only_a:
            self._add("field only in A", _child(where, ka), render(a[ka]), _NONE)
        for kb in only_b:
            self._add("field only in B", _child(where, kb), _NONE, render(b[kb]))
        for k, va in a.items():
            if k in b:
                self._json(_child(where, k), va, b[k], values, k)

    def _array(self, where: str, a: list[Any], b: list[Any], values: bool) -> None:
        keys_a = [_item_key(v, values) for v in a]
        keys_b = [_item_key(v, values) for v in b]
        matcher = SequenceMatcher(None, keys_a, keys_b, autojunk=False)
        for tag, a1, a2, b1, b2 in matcher.get_opcodes():
            paired = min(a2 - a1, b2 - b1) if tag in ("equal", "replace") else 0
            for k in range(paired):
                self._json(f"{where}[{a1 + k}]", a[a1 + k], b[b1 + k], values, None)
            for i in range(a1 + paired, a2):
                self._add("item only in A", f"{where}[{i}]", render(a[i]), _NONE)
            for j in range(b1 + paired, b2):
                self._add("item only in B", f"{where}[{j}]", _NONE, render(b[j]))

    def _text(self, where: str, a: Text, b: Text, name: str | None) -> None:
        if a.shape != b.shape:
            kind = {"status": "state", "code": "error code"}.get(name or "", "value")
            self._add(kind, where, render(a), render(b))
            return
        pairs = list(zip(a.placeholders, b.placeholders, strict=True))
        if any(
            self._a_to_b.get(pa, pb) != pb or self._b_to_a.get(pb, pa) != pa for pa, pb in pairs
        ):
            self._add("identity", where, render(a), render(b))
            return
        for pa, pb in pairs:
            self._a_to_b[pa] = pb
            self._b_to_a[pb] = pa


def _tail(side: _Side, other: _Side, other_control: bool, label: str) -> list[str]:
    """Why each of this side's last steps is skipped (none: every step is comparable)."""
    n = len(side.exchanges)
    stopped = other.record.stopped
    if stopped is not None and stopped.kind == "control":
        first = next((i for i, e in enumerate(side.exchanges) if e.control and not e.observed), n)
        reasons = [f"{other.reason()}, which {label} lacks: {label}'s flow stops here"]
        reasons += [f"comes after a step {label} could not run"] * (n - first - 1)
        return reasons[: n - first]
    if not other_control:
        first = next((i for i, e in enumerate(side.exchanges) if e.observed), n)
        return [f"parity reads events through a control route, which {label} lacks"] * (n - first)
    return []


def compare_flow(
    a: FlowRecord | None,
    b: FlowRecord | None,
    *,
    a_control: bool = True,
    b_control: bool = True,
) -> FlowResult:
    """Compare one flow's records on A and B.

    Args:
        a: the flow on A (``None``: A has no run of it, as a recording of other flows).
        b: the flow on B.
        a_control: whether A had the sandbox's control routes.
        b_control: whether B had them.

    Returns:
        The flow's steps compared; a flow one side did not run is skipped, with the reason.
    """
    if a is None or b is None:
        present = a or b
        if present is None:
            raise ValueError("neither side has a run of the flow")
        name = present.name
        note = f"{'A' if a is None else 'B'} has no run of this flow"
        return FlowResult(name, (), (), (note,))
    comparison = _FlowComparison(a.name)
    side_a, side_b = _Side.of(a), _Side.of(b)
    skip_a = _tail(side_a, side_b, b_control, "B")
    skip_b = _tail(side_b, side_a, a_control, "A")
    end_a, end_b = len(a.exchanges) - len(skip_a), len(b.exchanges) - len(skip_b)
    errored = {
        label: record.stopped.step - 1
        for label, record in (("A", a), ("B", b))
        if record.stopped is not None and record.stopped.kind == "error"
    }
    steps: list[Step] = []
    differences: list[Difference] = []
    keys_a = [side_a.key(i) for i in range(end_a)]
    keys_b = [side_b.key(j) for j in range(end_b)]
    matcher = SequenceMatcher(None, keys_a, keys_b, autojunk=False)
    for tag, a1, a2, b1, b2 in matcher.get_opcodes():
        paired = min(a2 - a1, b2 - b1) if tag == "equal" else 0
        for k in range(paired):
            i, j = a1 + k, b1 + k
            found = comparison.exchange(side_a, i, side_b, j)
            differences.extend(found)
            steps.append(
                Step(i + 1, j + 1, side_a.request(i), "differs" if found else "same",
                     side_a.exchanges[i].status, side_b.exchanges[j].status, found,
                     observed=side_a.exchanges[i].observed)
            )  # fmt: skip
        for i in range(a1 + paired, a2):
            steps.append(_one_sided(comparison, side_a, i, "A", errored.get("B")))
        for j in range(b1 + paired, b2):
            steps.append(_one_sided(comparison, side_b, j, "B", errored.get("A")))
    steps += [_skipped(side_a, end_a + k, "A", why) for k, why in enumerate(skip_a)]
    steps += [_skipped(side_b, end_b + k, "B", why) for k, why in enumerate(skip_b)]
    differences.extend(d for s in steps if s.outcome.startswith("only") for d in s.differences)
    notes = [
        f"{label} {side.stop()}"
        for label, side in (("A", side_a), ("B", side_b))
        if side.record.stopped is not None and side.record.stopped.kind == "error"
    ]
    notes += [
        f"{n} step{'s' if n > 1 else ''} of {label} skipped: {why[0]}"
        for label, why, n in (("A", skip_a, len(skip_a)), ("B", skip_b, len(skip_b)))
        if n
    ]
    differences.extend(_flow_level(comparison, side_a, side_b))
    return FlowResult(
        a.name, tuple(steps), tuple(differences), tuple(notes), len(a.exchanges), len(b.exchanges)
    )


def _one_sided(
    comparison: _FlowComparison, side: _Side, i: int, label: Literal["A", "B"], stop: int | None
) -> Step:
    """A step one side made and the other did not; skipped if the other's flow had failed."""
    if stop is not None and i >= stop:
        other = "B" if label == "A" else "A"
        return _skipped(side, i, label, f"{other}'s flow stopped with an error before it")
    outcome: Outcome = "only in A" if label == "A" else "only in B"
    return _one_step(side, i, label, outcome, (comparison.only(side, i, label),))


def _skipped(side: _Side, i: int, label: Literal["A", "B"], why: str) -> Step:
    return _one_step(side, i, label, "skipped", (), why)


def _one_step(
    side: _Side,
    i: int,
    label: Literal["A", "B"],
    outcome: Outcome,
    differences: tuple[Difference, ...],
    reason: str = "",
) -> Step:
    """A step seen on one side only (skipped, or only there)."""
    on_a = label == "A"
    status = side.exchanges[i].status
    return Step(
        step_a=i + 1 if on_a else None,
        step_b=None if on_a else i + 1,
        request=side.request(i),
        outcome=outcome,
        status_a=status if on_a else None,
        status_b=None if on_a else status,
        differences=differences,
        reason=reason,
        observed=side.exchanges[i].observed,
    )


def _flow_level(comparison: _FlowComparison, a: _Side, b: _Side) -> Iterable[Difference]:
    ra, rb = a.record, b.record
    errors = [r for r in (ra, rb) if r.stopped is not None and r.stopped.kind == "error"]
    if errors and (len(errors) == 1 or a.reason(shape=True) != b.reason(shape=True)):
        yield comparison.flow_level("stopped", "flow", a.stop(), b.stop())
    if ra.stopped is None and rb.stopped is None and ra.states != rb.states:
        yield comparison.flow_level(
            "states", "states", " → ".join(ra.states) or _NONE, " → ".join(rb.states) or _NONE
        )
    if ra.params != rb.params:
        yield comparison.flow_level("params", "params", render(ra.params), render(rb.params))


def compare(a: Recording, b: Recording, names: Iterable[str] | None = None) -> ParityReport:
    """Compare two targets' recordings flow by flow.

    Args:
        a: target A's run (live or loaded).
        b: target B's run.
        names: the flows to compare (default: those A ran, in its order).

    Returns:
        The report; a flow one side did not run is reported as skipped, with the reason.
    """
    results = [
        compare_flow(a.flow(name), b.flow(name), a_control=a.control_routes,
                     b_control=b.control_routes)
        for name in names or [f.name for f in a.flows]
    ]  # fmt: skip
    return ParityReport(a.target, b.target, tuple(results))
