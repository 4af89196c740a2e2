"""State tracking: what may be done next, what happened so far, and waiting for a change.

* `allowed_actions` reads the state machines of `workbench.spec` (the spec's
  tables plus the sandbox's documented decisions) for a result's status.
* `Tracker` watches a client and records every call: time, method, path,
  status code, request id, idempotency key, retries and the object's state
  before and after. `Tracker.history` is a DataFrame; `Tracker.mermaid` draws
  the observed path of one payment or subscription.
* `wait_until` (and the async `await_until`) poll with backoff until a
  predicate holds; `wait_for_subscription` and `wait_for_refund` use them for
  ``charging`` subscriptions and in-flight refunds.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import unquote

from workbench._base_client import BaseClient
from workbench._exceptions import WorkbenchError
from workbench._response import ResponseInfo
from workbench.models import (
    APIObject,
    CaptureResult,
    CardCharge,
    ChargeReceipt,
    CheckoutSession,
    Payment,
    PublicCancellation,
    PublicPaymentStatus,
    PublicSubscription,
    RefundResult,
    Subscription,
    SubscriptionCancellation,
    SubscriptionUpdate,
    ThreeDSecureResult,
    VoidResult,
)
from workbench.spec import PAYMENT, SESSION, SUBSCRIPTION, StateMachine

if TYPE_CHECKING:
    import pandas as pd

    from workbench._client import AsyncClient, Client

__all__ = [
    "CallRecord",
    "Tracker",
    "WaitTimeout",
    "allowed_actions",
    "await_for_refund",
    "await_for_subscription",
    "await_until",
    "machine_for",
    "wait_for_refund",
    "wait_for_subscription",
    "wait_until",
]

T = TypeVar("T")

_PAYMENT_MODELS: tuple[type[APIObject], ...] = (
    Payment,
    CardCharge,
    ThreeDSecureResult,
    CaptureResult,
    VoidResult,
    PublicPaymentStatus,
    RefundResult,
)
_SUBSCRIPTION_MODELS: tuple[type[APIObject], ...] = (
    Subscription,
    ChargeReceipt,
    SubscriptionUpdate,
    SubscriptionCancellation,
    PublicSubscription,
    PublicCancellation,
)


def machine_for(obj: APIObject | str) -> StateMachine:
    """The state machine of a result, or of an identifier by its prefix.

    Raises:
        ValueError: for an object that has no state machine.
    """
    if isinstance(obj, _PAYMENT_MODELS):
        return PAYMENT
    if isinstance(obj, _SUBSCRIPTION_MODELS):
        return SUBSCRIPTION
    if isinstance(obj, CheckoutSession):
        return SESSION
    if isinstance(obj, str):
        if obj.startswith("pay_"):
            return PAYMENT
        if obj.startswith("sub_"):
            return SUBSCRIPTION
    raise ValueError(f"no state machine for {type(obj).__name__}")


def allowed_actions(
    obj: APIObject | str, state: str | None = None, *, include_idempotent: bool = False
) -> list[str]:
    """The actions a caller may take next on a payment, subscription or session.

    Args:
        obj: a result model (its ``status`` is used), or an id such as ``pay_…``.
        state: the state to ask about (default: the object's ``status``).
        include_idempotent: also list repeats that are harmless no-ops.

    Example:
        >>> allowed_actions("pay_x", "authorized")
        ['capture', 'void']
    """
    machine = machine_for(obj)
    if state is None:
        state = getattr(obj, "status", None)
    if state is None:
        raise ValueError("no state given and the object has no status")
    if isinstance(obj, ChargeReceipt):
        state = "charging"
    return machine.actions(state, include_idempotent=include_idempotent)


@dataclass(frozen=True, slots=True)
class CallRecord:
    """One finished call, as the tracker saw it."""

    time: datetime
    method: str
    path: str
    status_code: int
    request_id: str | None
    idempotency_key: str | None
    retries: int
    object_id: str | None
    action: str
    state_before: str | None
    state_after: str | None
    error_code: str | None


_ACTIONS = {
    "card": "charge",
    "sessions": "create",
    "3ds-callback": "3ds_callback",
    "charge-now": "charge_now",
    "update-card-session": "update_card_session",
}


def _segments(path: str) -> list[str]:
    return [unquote(s) for s in path.strip("/").split("/")]


def _action(method: str, parts: list[str]) -> str:
    if method == "GET":
        if parts == ["v1", "subscriptions"]:
            return "list"
        if parts[-1] in ("public-status", "charges"):
            return parts[-1].replace("-", "_")
        return "retrieve"
    last = parts[-1]
    if parts[:2] == ["v1", "public"] and last == "cancel":
        return "public_cancel"
    if parts == ["v1", "subscriptions"]:
        return "create"
    return _ACTIONS.get(last, last.replace("-", "_"))


class Tracker:
    """Records every call a client makes and the states its objects went through.

    Example:
        >>> tracker = Tracker(client)  # doctest: +SKIP
        >>> charge = client.payments.charge_card(...)  # doctest: +SKIP
        >>> tracker.history(charge.payment_id)  # doctest: +SKIP
    """

    def __init__(self, client: BaseClient | None = None) -> None:
        self.records: list[CallRecord] = []
        self._states: dict[str, str] = {}
        self._hash_to_id: dict[str, str] = {}
        self._clients: list[BaseClient] = []
        if client is not None:
            self.attach(client)

    def attach(self, client: BaseClient) -> None:
        """Start recording the calls of ``client`` (sync or async)."""
        client.add_observer(self.observe)
        self._clients.append(client)

    def detach(self) -> None:
        """Stop recording."""
        for client in self._clients:
            client.remove_observer(self.observe)
        self._clients.clear()

    def state(self, object_id: str) -> str | None:
        """The last known state of an object."""
        return self._states.get(object_id)

    def observe(self, info: ResponseInfo, body: Any) -> None:
        """Record one finished call (the client calls this; tests may too)."""
        data = body if isinstance(body, dict) else {}
        parts = _segments(info.path)
        action = _action(info.method, parts)
        object_id = self._object_id(parts, data)
        before = self._states.get(object_id) if object_id else None
        after = before
        error_code: str | None = None
        if info.status_code >= 400:
            error_code = str(data.get("code") or "") or None
        elif object_id is not None:
            if action == "charge_now":
                after = "charging"
            elif isinstance(data.get("status"), str) and action != "update_card_session":
                after = data["status"]
            if after is not None:
                self._states[object_id] = after
        self.records.append(
            CallRecord(
                time=datetime.now(UTC),
                method=info.method,
                path=info.path,
                status_code=info.status_code,
                request_id=info.request_id,
                idempotency_key=info.idempotency_key,
                retries=info.retries,
                object_id=object_id,
                action=action,
                state_before=before,
                state_after=after,
                error_code=error_code,
            )
        )

    def _object_id(self, parts: list[str], data: dict[str, Any]) -> str | None:
        if parts[:1] != ["v1"] or len(parts) < 2:
            return None
        if parts[1] == "payments":
            if len(parts) == 3 and parts[2] == "card":
                return _str(data.get("paymentId"))
            if len(parts) == 3 and parts[2] == "sessions":
                return _str(data.get("sessionId"))
            return parts[2] if len(parts) >= 3 else None
        if parts[1] == "subscriptions":
            if len(parts) == 2:
                sub_id = _str(data.get("id"))
                public_hash = _str(data.get("publicHash"))
                if sub_id and public_hash:
                    self._hash_to_id[public_hash] = sub_id
                return sub_id
            return parts[2]
        if parts[1] == "public" and len(parts) >= 4:
            return self._hash_to_id.get(parts[3], parts[3])
        return None

    def history(self, object_id: str | None = None) -> pd.DataFrame:
        """The recorded calls (of one object, if given) as a DataFrame, oldest first."""
        import pandas as pd

        rows = [asdict(r) for r in self.records if object_id is None or r.object_id == object_id]
        columns = list(CallRecord.__dataclass_fields__)
        return pd.DataFrame(rows, columns=columns)

    def states(self, object_id: str) -> list[str]:
        """The distinct states an object was seen in, in order."""
        seen: list[str] = []
        for r in self.records:
            if (
                r.object_id == object_id
                and r.state_after
                and (not seen or seen[-1] != r.state_after)
            ):
                seen.append(r.state_after)
        return seen

    def mermaid(self, object_id: str) -> str:
        """The observed path of one object as a Mermaid ``stateDiagram-v2``.

        Each edge is a call that changed (or first revealed) the state, labelled
        with its action and step number; states reached only by polling are
        labelled ``observed``.
        """
        lines = ["stateDiagram-v2"]
        step = 0
        for r in self.records:
            if r.object_id != object_id or r.state_after is None:
                continue
            if r.state_before == r.state_after and r.action != "charge_now":
                continue
            step += 1
            source = r.state_before or "[*]"
            label = "observed" if r.method == "GET" else r.action
            lines.append(f"    {source} --> {r.state_after}: {step}. {label}")
        return "\n".join(lines)


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


class WaitTimeout(WorkbenchError, TimeoutError):
    """The condition did not hold before the timeout.

    Attributes:
        last: the last value fetched.
    """

    def __init__(self, message: str, last: Any) -> None:
        super().__init__(message)
        self.last = last


@dataclass(frozen=True, slots=True)
class _Backoff:
    timeout: float
    interval: float
    max_interval: float
    factor: float

    def delays(self) -> Callable[[], float]:
        current = [self.interval]

        def next_delay() -> float:
            delay = current[0]
            current[0] = min(self.max_interval, current[0] * self.factor)
            return delay

        return next_delay


def wait_until(
    fetch: Callable[[], T],
    predicate: Callable[[T], bool],
    *,
    timeout: float = 30.0,
    interval: float = 0.2,
    max_interval: float = 2.0,
    factor: float = 1.5,
    between: Callable[[], object] | None = None,
    sleep: Callable[[float], None] = time.sleep,
    monotonic: Callable[[], float] = time.monotonic,
    first: T | None = None,
) -> T:
    """Call ``fetch`` until ``predicate(value)`` holds; return that value.

    Args:
        fetch: reads the current value (a retrieve call, say).
        predicate: the condition to wait for.
        timeout: seconds before giving up.
        interval: the first pause between polls, in seconds.
        max_interval: the longest pause.
        factor: each pause is this much longer than the last.
        between: called before each poll after the first (``client.sandbox.tick``
            makes the local sandbox's reconciler run instead of waiting for it).
        sleep: the pause function.
        monotonic: the clock measuring the timeout.
        first: a value already fetched, to test before the first pause.

    Raises:
        WaitTimeout: the condition did not hold in time; ``.last`` is the last value.
    """
    next_delay = _Backoff(timeout, interval, max_interval, factor).delays()
    deadline = monotonic() + timeout
    value = fetch() if first is None else first
    while not predicate(value):
        if monotonic() >= deadline:
            raise WaitTimeout(f"condition not met within {timeout:g} s", value)
        sleep(next_delay())
        if between is not None:
            between()
        value = fetch()
    return value


async def await_until(
    fetch: Callable[[], Awaitable[T]],
    predicate: Callable[[T], bool],
    *,
    timeout: float = 30.0,  # noqa: ASYNC109 - a polling deadline raising WaitTimeout with the last value
    interval: float = 0.2,
    max_interval: float = 2.0,
    factor: float = 1.5,
    between: Callable[[], object] | None = None,
    monotonic: Callable[[], float] = time.monotonic,
    first: T | None = None,
) -> T:
    """The async `wait_until`: ``fetch`` is a coroutine function, ``between`` may be one.

    Raises:
        WaitTimeout: the condition did not hold in time; ``.last`` is the last value.
    """
    next_delay = _Backoff(timeout, interval, max_interval, factor).delays()
    deadline = monotonic() + timeout
    value = await fetch() if first is None else first
    while not predicate(value):
        if monotonic() >= deadline:
            raise WaitTimeout(f"condition not met within {timeout:g} s", value)
        await asyncio.sleep(next_delay())
        if between is not None:
            outcome = between()
            if inspect.isawaitable(outcome):
                await outcome
        value = await fetch()
    return value


def _leaves(states: Sequence[str]) -> Callable[[Subscription], bool]:
    return lambda sub: sub.status not in states


def wait_for_subscription(
    client: Client,
    subscription_id: str,
    *,
    leave: Sequence[str] = ("charging",),
    timeout: float = 30.0,
    between: Callable[[], object] | None = None,
) -> Subscription:
    """Poll a subscription until its status is none of ``leave`` (default ``charging``)."""
    return wait_until(
        lambda: client.subscriptions.retrieve(subscription_id),
        _leaves(leave),
        timeout=timeout,
        between=between,
    )


async def await_for_subscription(
    client: AsyncClient,
    subscription_id: str,
    *,
    leave: Sequence[str] = ("charging",),
    timeout: float = 30.0,  # noqa: ASYNC109 - a polling deadline raising WaitTimeout with the last value
    between: Callable[[], object] | None = None,
) -> Subscription:
    """The async `wait_for_subscription`."""
    return await await_until(
        lambda: client.subscriptions.retrieve(subscription_id),
        _leaves(leave),
        timeout=timeout,
        between=between,
    )


def _refund_again(result: RefundResult) -> tuple[str, int | None, str | None, str]:
    info = result.response
    if info is None or info.idempotency_key is None:
        raise ValueError("wait_for_refund needs a RefundResult returned by a client call")
    sent = info.http_response.request.content
    body = json.loads(sent) if sent else {}
    return result.payment_id, body.get("amount"), body.get("reason"), info.idempotency_key


def wait_for_refund(
    client: Client,
    result: RefundResult,
    *,
    timeout: float = 30.0,
    between: Callable[[], object] | None = None,
) -> RefundResult:
    """Ask again, under the same Idempotency-Key and payload, until the refund settles.

    The service answers 202 while the refund is in flight and the final answer
    (200) once it settled; the same request is therefore the way to poll it.
    """
    if not result.in_flight:
        return result
    payment_id, amount, reason, key = _refund_again(result)
    return wait_until(
        lambda: client.payments.refund(
            payment_id, amount=amount, reason=reason, idempotency_key=key
        ),
        lambda r: not r.in_flight,
        timeout=timeout,
        between=between,
        first=result,
    )


async def await_for_refund(
    client: AsyncClient,
    result: RefundResult,
    *,
    timeout: float = 30.0,  # noqa: ASYNC109 - a polling deadline raising WaitTimeout with the last value
    between: Callable[[], object] | None = None,
) -> RefundResult:
    """The async `wait_for_refund`."""
    if not result.in_flight:
        return result
    payment_id, amount, reason, key = _refund_again(result)
    return await await_until(
        lambda: client.payments.refund(
            payment_id, amount=amount, reason=reason, idempotency_key=key
        ),
        lambda r: not r.in_flight,
        timeout=timeout,
        between=between,
        first=result,
    )
