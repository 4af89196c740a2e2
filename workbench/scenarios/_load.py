"""Read a scenario file and check all of it before anything is made.

A scenario is a mapping with a ``steps`` list (and, if you like, a ``name`` and a
``description``). Each step is a mapping with one action key, whose value maps the
action's fields, and an optional ``name`` by which later steps use its result::

    steps:
      - name: charge
        charge: {amount: 15000, cardToken: tok_test_refund_async}
      - name: refund
        refund: {paymentId: "${charge.id}"}

A string ``${step.field}`` (or ``${step.field.inner}``) is the value of that field of an
earlier step's result; a string that is only a reference takes the value as it is (a
number stays a number). ``${run}`` is an id of this run (12 hex digits), for
transaction ids that must be new each time.

YAML and JSON both read through PyYAML's composer, which keeps each value's line, so a
mistake is reported as ``FILE:LINE: step N (name): what is wrong``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from workbench._extras import MissingExtraError

__all__ = ["ACTIONS", "Action", "Scenario", "ScenarioError", "Step", "load_scenario"]

_REFERENCE = re.compile(r"\$\{([^}]*)\}")
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]*$")


class ScenarioError(ValueError):
    """A scenario file that cannot be run: nothing was made.

    Attributes:
        file: the file.
        line: the line the mistake is on (1-based; ``None`` when the file is unreadable).
        step: the step's number (1-based; ``None`` outside the steps).
    """

    def __init__(self, file: str, line: int | None, step: int | None, message: str) -> None:
        where = f"{file}:{line}" if line else file
        if step is not None:
            where += f": step {step}"
        super().__init__(f"{where}: {message}")
        self.file, self.line, self.step = file, line, step


@dataclass(frozen=True)
class Action:
    """What a step can do.

    Attributes:
        name: the step's action key (``charge``, ``refund``...).
        summary: what it does.
        required: fields it must be given.
        optional: fields it may be given.
        integers: the fields that are whole numbers.
        result: the fields of its result a later step may use (``id`` always).
    """

    name: str
    summary: str
    required: frozenset[str]
    optional: frozenset[str]
    integers: frozenset[str]
    result: frozenset[str]


def _action(
    name: str,
    summary: str,
    required: str,
    optional: str,
    result: str,
    integers: str = "amount",
) -> Action:
    return Action(
        name,
        summary,
        frozenset(required.split()),
        frozenset(optional.split()),
        frozenset(integers.split()),
        frozenset({"id", *result.split()}),
    )


_PAYMENT = "paymentId status amount currency commission completedAt correlationId acsUrl"
#: Every action a step can take, with its fields.
ACTIONS: dict[str, Action] = {
    a.name: a
    for a in (
        _action(
            "session",
            "create a checkout session",
            "amount",
            "transactionId returnUrl description customerId callbackUrl mode",
            "sessionId checkoutUrl expiresAt amount status",
        ),
        _action(
            "charge",
            "charge a card by its token",
            "amount",
            "transactionId cardToken threeDSecure installments customerId",
            _PAYMENT,
            "amount installments",
        ),
        _action(
            "preauthorize",
            "hold an amount on a card (capture=false)",
            "amount",
            "transactionId cardToken threeDSecure installments customerId",
            _PAYMENT,
            "amount installments",
        ),
        _action("capture", "capture a preauthorization", "paymentId", "", "status amount"),
        _action("void", "void a preauthorization", "paymentId", "reason", "status amount"),
        _action(
            "refund",
            "refund a captured payment, in full or in part",
            "paymentId",
            "amount reason",
            "paymentId status refundAmount refundableAmount lastRefund refundId inFlight",
        ),
        _action(
            "subscribe",
            "create a subscription (interval: '1 month', '7 day'...)",
            "amount",
            "customerId interval cardToken trialEndAt description",
            "status amountMinor nextChargeAt publicHash cycleNumber",
        ),
        _action(
            "advance_clock",
            "move the merchant's business clock and run what falls due",
            "",
            "seconds minutes hours days",
            "businessTime",
            "seconds minutes hours days",
        ),
        _action("set_webhook", "point the store's webhook at a URL (null: none)", "url", "", "url"),
    )
}


@dataclass(frozen=True)
class Step:
    """One step, checked.

    Attributes:
        number: its place, from 1.
        action: what it does.
        name: the name later steps use its result by (``None``: unnamed).
        fields: its fields, references left as written.
        line: the line it starts on.
    """

    number: int
    action: Action
    name: str | None
    fields: dict[str, Any]
    line: int

    @property
    def label(self) -> str:
        """``name (action)``, or the action alone."""
        return f"{self.name} ({self.action.name})" if self.name else self.action.name


@dataclass(frozen=True)
class Scenario:
    """A scenario file, read and checked.

    Attributes:
        file: where it was read from.
        name: its ``name`` (the file's stem when it has none).
        description: its ``description``.
        steps: its steps, in order.
    """

    file: str
    name: str
    description: str
    steps: list[Step] = field(default_factory=list)


def _yaml() -> Any:
    try:
        import yaml
    except ImportError:
        raise MissingExtraError("a scenario file", ["testing"]) from None
    return yaml


class _Reader:
    """The composed document, with the line of each value."""

    def __init__(self, file: str, text: str) -> None:
        self.file = file
        self.yaml = _yaml()
        try:
            self.root = self.yaml.compose(text, Loader=self.yaml.SafeLoader)
        except self.yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            line = mark.line + 1 if mark is not None else None
            problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
            raise ScenarioError(file, line, None, f"not YAML or JSON: {problem}") from None
        self.constructor = self.yaml.constructor.SafeConstructor()

    def plain(self, node: Any) -> Any:
        return self.constructor.construct_object(node, deep=True)

    def fail(self, node: Any, step: int | None, message: str) -> ScenarioError:
        return ScenarioError(self.file, node.start_mark.line + 1, step, message)

    def mapping(self, node: Any, step: int | None, what: str) -> list[tuple[str, Any, Any]]:
        """``(key, key node, value node)`` of a mapping node, keys checked to be strings."""
        if not isinstance(node, self.yaml.MappingNode):
            raise self.fail(node, step, f"{what} is not a mapping")
        pairs = []
        seen: set[str] = set()
        for key_node, value_node in node.value:
            key = self.plain(key_node)
            if not isinstance(key, str):
                raise self.fail(key_node, step, f"{what} has a key that is not text: {key!r}")
            if key in seen:
                raise self.fail(key_node, step, f"{what} gives {key!r} twice")
            seen.add(key)
            pairs.append((key, key_node, value_node))
        return pairs


def _references(value: Any) -> list[str]:
    if isinstance(value, str):
        return _REFERENCE.findall(value)
    if isinstance(value, Mapping):
        return [r for v in value.values() for r in _references(v)]
    if isinstance(value, list):
        return [r for v in value for r in _references(v)]
    return []


def _check_field(
    reader: _Reader, number: int, action: Action, name: str, node: Any, earlier: dict[str, Step]
) -> Any:
    value = reader.plain(node)
    for reference in _references(value):
        parts = reference.split(".")
        if parts == ["run"]:
            continue
        if len(parts) < 2 or parts[0] not in earlier:
            named = ", ".join(earlier) or "none yet"
            raise reader.fail(
                node,
                number,
                f"{name}: ${{{reference}}} names no earlier step (named so far: {named})",
            )
        source = earlier[parts[0]]
        if parts[1] not in source.action.result:
            fields = ", ".join(sorted(source.action.result))
            raise reader.fail(
                node, number, f"{name}: {source.label} has no result field {parts[1]!r} ({fields})"
            )
    whole_reference = isinstance(value, str) and _REFERENCE.fullmatch(value) is not None
    number_expected = name in action.integers and not whole_reference
    if number_expected and (isinstance(value, bool) or not isinstance(value, int)):
        raise reader.fail(node, number, f"{name} is a whole number, not {value!r}")
    return value


def load_scenario(path: str | Path) -> Scenario:
    """Read and check a scenario file (YAML or JSON); nothing is sent.

    Args:
        path: the file.

    Returns:
        The scenario, every step checked: its action known, its fields the action's,
        its required fields given, its numbers numbers, and every reference naming an
        earlier step's result field.

    Raises:
        ScenarioError: what is wrong and where (file, line, step).
        MissingExtraError: PyYAML is not installed (the ``testing`` extra brings it).
    """
    file = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ScenarioError(file, None, None, f"cannot be read: {type(exc).__name__}") from None
    if Path(path).suffix.lower() == ".json":
        try:  # YAML reads more than JSON (a trailing comma): a .json file must be JSON
            json.loads(text)
        except json.JSONDecodeError as exc:
            raise ScenarioError(file, exc.lineno, None, f"not JSON: {exc.msg}") from None
    reader = _Reader(file, text)
    if reader.root is None:
        raise ScenarioError(file, 1, None, "is empty: give a mapping with a steps list")
    pairs = reader.mapping(reader.root, None, "the file")
    top = {key: (key_node, value) for key, key_node, value in pairs}
    unknown = sorted(set(top) - {"name", "description", "steps"})
    if unknown:
        where = top[unknown[0]][0]
        raise reader.fail(where, None, f"unknown key {unknown[0]!r} (name, description, steps)")
    if "steps" not in top:
        raise reader.fail(reader.root, None, "has no steps list")
    steps_node = top["steps"][1]
    if not isinstance(steps_node, reader.yaml.SequenceNode) or not steps_node.value:
        raise reader.fail(steps_node, None, "steps is not a list of steps")
    earlier: dict[str, Step] = {}
    steps: list[Step] = []
    for number, node in enumerate(steps_node.value, start=1):
        step = _step(reader, number, node, earlier)
        steps.append(step)
        if step.name:
            earlier[step.name] = step
    title = reader.plain(top["name"][1]) if "name" in top else Path(path).stem
    about = reader.plain(top["description"][1]) if "description" in top else ""
    return Scenario(file, str(title), str(about), steps)


def _step(reader: _Reader, number: int, node: Any, earlier: dict[str, Step]) -> Step:
    """One step, checked against its action and the steps before it."""
    name: str | None = None
    actions = []
    for key, key_node, value_node in reader.mapping(node, number, "the step"):
        if key == "name":
            name = reader.plain(value_node)
            if not isinstance(name, str) or not _NAME.match(name) or name == "run":
                raise reader.fail(value_node, number, f"name {name!r} is not a plain name")
            if name in earlier:
                raise reader.fail(value_node, number, f"name {name!r} is taken already")
        elif key in ACTIONS:
            actions.append((key, key_node, value_node))
        else:
            known = ", ".join(ACTIONS)
            raise reader.fail(key_node, number, f"unknown action {key!r} (one of {known})")
    if len(actions) != 1:
        what = "no action" if not actions else f"{len(actions)} actions"
        raise reader.fail(node, number, f"has {what}; a step does one of {', '.join(ACTIONS)}")
    [(key, key_node, value_node)] = actions
    action = ACTIONS[key]
    allowed = action.required | action.optional
    fields: dict[str, Any] = {}
    given = [] if value_node.tag.endswith(":null") else reader.mapping(value_node, number, key)
    for field_name, field_node, field_value in given:
        if field_name not in allowed:
            names = ", ".join(sorted(allowed))
            raise reader.fail(field_node, number, f"{key} has no field {field_name!r} ({names})")
        fields[field_name] = _check_field(reader, number, action, field_name, field_value, earlier)
    missing = sorted(action.required - set(fields))
    if missing:
        raise reader.fail(key_node, number, f"{key} needs {', '.join(missing)}")
    return Step(number, action, name, fields, node.start_mark.line + 1)
