"""Run a checked scenario with the client, step by step, each result named for the next.

Each step is one call of the ordinary client (the clock and the webhook through the
sandbox's control routes). Its result is the answer's JSON object (camelCase, as sent)
plus ``id``, the id of the object it made or acted on; later steps read it through
``${name.field}``. A step the service refuses stops the run with `StepFailed`, which
carries the error's envelope; the steps before it stay made.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from workbench._exceptions import APIError
from workbench.scenarios._load import Scenario, ScenarioError, Step

if TYPE_CHECKING:
    from workbench._client import Client
    from workbench.models._base import APIObject

__all__ = ["StepFailed", "StepResult", "run_scenario"]

_REFERENCE = re.compile(r"\$\{([^}]*)\}")
#: The card a charge is made with unless its step names another.
_CARD = "tok_test_success"
_SECONDS = {"seconds": 1, "minutes": 60, "hours": 3600, "days": 86_400}


class StepFailed(Exception):
    """A step the service refused; the steps before it were made.

    Attributes:
        step: the step.
        envelope: the error's envelope (``code``, ``message``, ``requestId``).
        status: the HTTP status.
    """

    def __init__(self, step: Step, error: APIError) -> None:
        self.step = step
        self.status = error.http_status
        self.envelope = {
            "code": error.code,
            "message": error.message,
            "requestId": error.request_id,
        }
        super().__init__(f"step {step.number} {step.label}: {error.code} {error.message}")


@dataclass(frozen=True)
class StepResult:
    """What one step made.

    Attributes:
        step: the step.
        result: its result (the answer's fields, camelCase, and ``id``).
    """

    step: Step
    result: dict[str, Any]

    def summary(self) -> str:
        """One line: the object's id and its status, amount or time."""
        shown = [str(self.result.get("id") or "")]
        for key in ("status", "amount", "amountMinor", "businessTime", "url"):
            if key in self.result and self.result[key] is not None:
                shown.append(f"{key}={self.result[key]}")
        if self.result.get("inFlight"):
            shown.append("in flight (202)")
        return " ".join(part for part in shown if part)


class _Values:
    """The results so far, for references."""

    def __init__(self) -> None:
        self.run = uuid.uuid4().hex[:12]
        self.results: dict[str, dict[str, Any]] = {}
        #: The number of the step being run (a made-up transaction id holds it).
        self.step = 0

    def look_up(self, reference: str) -> Any:
        if reference == "run":
            return self.run
        name, *path = reference.split(".")
        value: Any = self.results[name]
        for part in path:
            if not isinstance(value, dict) or part not in value:
                raise KeyError(f"${{{reference}}}: the result has no {part!r}")
            value = value[part]
        return value

    def resolve(self, value: Any) -> Any:
        if isinstance(value, str):
            whole = _REFERENCE.fullmatch(value)
            if whole:
                return self.look_up(whole.group(1))
            return _REFERENCE.sub(lambda m: str(self.look_up(m.group(1))), value)
        if isinstance(value, dict):
            return {k: self.resolve(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self.resolve(v) for v in value]
        return value


def _dump(model: APIObject, object_id: str | None) -> dict[str, Any]:
    result: dict[str, Any] = model.model_dump(mode="json", by_alias=True)
    result["id"] = object_id
    return result


def _charge(client: Client, f: dict[str, Any], values: _Values, capture: bool) -> dict[str, Any]:
    charge = client.payments.charge_card(
        transaction_id=f.get("transactionId") or f"scenario-{values.run}-{values.step}",
        amount=f["amount"],
        card_token=f.get("cardToken", _CARD),
        three_d_secure=f.get("threeDSecure", False),
        installment_count=f.get("installments"),
        customer_id=f.get("customerId"),
        capture=capture,
    )
    return _dump(charge, charge.id)


def _session(client: Client, f: dict[str, Any], values: _Values) -> dict[str, Any]:
    session = client.sessions.create(
        transaction_id=f.get("transactionId") or f"scenario-{values.run}-{values.step}",
        amount=f["amount"],
        return_url=f.get("returnUrl") or client.base_url.rstrip("/") + "/demo/merchant/return",
        description=f.get("description"),
        customer_id=f.get("customerId"),
        callback_url=f.get("callbackUrl"),
        mode=f.get("mode"),
    )
    return _dump(session, session.id)


def _refund(client: Client, f: dict[str, Any]) -> dict[str, Any]:
    refund = client.payments.refund(f["paymentId"], amount=f.get("amount"), reason=f.get("reason"))
    last = refund.last_refund
    result = _dump(refund, last.id if last else refund.id)
    result["refundId"] = last.id if last else None
    result["inFlight"] = refund.in_flight
    return result


def _subscribe(client: Client, f: dict[str, Any]) -> dict[str, Any]:
    count, _, unit = str(f.get("interval", "1 month")).strip().partition(" ")
    if not count.isdigit() or not unit:
        raise ValueError(f"interval {f.get('interval')!r}: give a count and a unit, e.g. '1 day'")
    # unless the step names a customer, the merchant's first (its own: each merchant,
    # one made on demand too, has its own customers and store)
    fixtures = client.sandbox.fixtures()
    sub = client.subscriptions.create(
        store_id=fixtures.store_id,
        customer_id=f.get("customerId", fixtures.customers[0].id),
        amount_minor=f["amount"],
        interval_count=int(count),
        interval_unit=unit.rstrip("s"),
        card_token=f.get("cardToken", _CARD),
        trial_end_at=f.get("trialEndAt"),
        description=f.get("description"),
    )
    return _dump(sub, sub.id)


def _advance(client: Client, f: dict[str, Any]) -> dict[str, Any]:
    seconds = sum(int(f.get(unit, 0)) * size for unit, size in _SECONDS.items())
    moved = client.sandbox.advance_clock(seconds)
    return _dump(moved, None)


def _call(client: Client, step: Step, f: dict[str, Any], values: _Values) -> dict[str, Any]:
    action = step.action.name
    if action == "charge":
        return _charge(client, f, values, capture=True)
    if action == "preauthorize":
        return _charge(client, f, values, capture=False)
    if action == "session":
        return _session(client, f, values)
    if action == "capture":
        captured = client.payments.capture(f["paymentId"])
        return _dump(captured, captured.id)
    if action == "void":
        voided = client.payments.void(f["paymentId"], reason=f.get("reason"))
        return _dump(voided, voided.id)
    if action == "refund":
        return _refund(client, f)
    if action == "subscribe":
        return _subscribe(client, f)
    if action == "advance_clock":
        return _advance(client, f)
    if action == "set_webhook":
        target = client.sandbox.set_webhook(f["url"])
        return _dump(target, None)
    raise LookupError(f"no runner for the action {action!r}")  # a new action in ACTIONS


def run_scenario(
    client: Client,
    scenario: Scenario,
    *,
    on_step: Callable[[StepResult], None] | None = None,
) -> dict[str, dict[str, Any]]:
    """Run ``scenario``'s steps in order with ``client``.

    Args:
        client: a client of the local sandbox (the clock and the webhook are its
            control routes).
        scenario: a scenario `load_scenario` read.
        on_step: called with each step's result as it is made (the CLI prints it).

    Returns:
        The named steps' results, by name.

    Raises:
        StepFailed: a step the service refused (its envelope on the error); the run
            stops there.
        ScenarioError: a reference to a field an earlier result does not hold (a
            nested one, which only the answer shows); the run stops there.
    """
    values = _Values()
    for step in scenario.steps:
        values.step = step.number
        try:
            fields = values.resolve(step.fields)
        except KeyError as exc:
            raise ScenarioError(scenario.file, step.line, step.number, str(exc.args[0])) from None
        try:
            result = _call(client, step, fields, values)
        except APIError as error:
            raise StepFailed(step, error) from None
        if step.name:
            values.results[step.name] = result
        else:
            values.results[f"#{step.number}"] = result
        if on_step is not None:
            on_step(StepResult(step, result))
    return {name: result for name, result in values.results.items() if not name.startswith("#")}
