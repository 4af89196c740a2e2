"""State tracking: what may be done next, and what happened so far.

* `allowed_actions` reads the state machines of `workbench.spec` (the spec's
  tables plus the sandbox's documented decisions) for a result's status.
* `Tracker` watches a client and records every call: time, method, path,
  status code, request id, idempotency key, retries and the object's state
  before and after. `Tracker.history` is a DataFrame; `Tracker.mermaid` draws
  the observed path of one payment or subscription.

The tracker reads what a call was about from its `ResponseInfo` (``action``,
``object_id``, ``object_state``, ``object_alias``), which the resource method
named on its `RequestOptions`; it knows no paths, so a new endpoint is tracked
as soon as its method fills those in. Waiting for a change (`wait_until`,
`wait_for_refund`...) lives in `workbench.waiting`; its names are importable
from here too.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from workbench._base_client import BaseClient
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
from workbench.waiting import (
    WaitTimeout,
    await_for_refund,
    await_for_subscription,
    await_until,
    wait_for_refund,
    wait_for_subscription,
    wait_until,
)

if TYPE_CHECKING:
    import pandas as pd

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
        ```pycon
        >>> allowed_actions("pay_x", "authorized")
        ['capture', 'void']
        ```
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
    """One finished call, as the tracker saw it.

    Attributes:
        action: what the call did, as its resource method named it (the HTTP method
            for a call sent through ``request`` without one).
        object_id: the object it acted on; a public hash is recorded as the
            subscription id it belongs to, once the tracker has seen both.
    """

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


class Tracker:
    """Records every call a client makes and the states its objects went through.

    Example:
        ```python
        tracker = Tracker(client)
        charge = client.payments.charge_card(...)
        tracker.history(charge.id)
        ```
    """

    def __init__(self, client: BaseClient | None = None) -> None:
        self.records: list[CallRecord] = []
        self._states: dict[str, str] = {}
        self._aliases: dict[str, str] = {}
        self._stated: set[int] = set()
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
        object_id = info.object_id
        if object_id is not None:
            object_id = self._aliases.get(object_id, object_id)
            if info.object_alias is not None:
                self._aliases[info.object_alias] = object_id
        before = self._states.get(object_id) if object_id else None
        after = before
        error_code: str | None = None
        if info.status_code >= 400:
            data = body if isinstance(body, dict) else {}
            error_code = str(data.get("code") or "") or None
        elif object_id is not None and info.object_state is not None:
            after = info.object_state
            self._states[object_id] = after
            if info.options is not None and info.options.state is not None:
                self._stated.add(len(self.records))
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
                action=info.action or info.method,
                state_before=before,
                state_after=after,
                error_code=error_code,
            )
        )

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

        Each edge is a call that changed (or first revealed) the state, or that
        put the object in its state by itself (a second queued charge of a
        subscription already ``charging``), labelled with its action and step
        number; states reached only by polling are labelled ``observed``.
        """
        lines = ["stateDiagram-v2"]
        step = 0
        for index, r in enumerate(self.records):
            if r.object_id != object_id or r.state_after is None:
                continue
            if r.state_before == r.state_after and index not in self._stated:
                continue
            step += 1
            source = r.state_before or "[*]"
            label = "observed" if r.method == "GET" else r.action
            lines.append(f"    {source} --> {r.state_after}: {step}. {label}")
        return "\n".join(lines)
