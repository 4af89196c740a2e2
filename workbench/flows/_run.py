"""`FlowRun`: what one flow did — its calls, their answers, the states seen — and a summary.

A flow records through two observers on the client: a `Tracker` (state history,
allowed actions) and a call log keeping each request and response body, with
the values that must never be shown (ACS assertions, card numbers, webhook
secrets) masked before they are kept.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from workbench._response import ResponseInfo
from workbench.flows._diagram import StatePath
from workbench.flows._http import Exchanges, decode_body, shown_headers
from workbench.tracking import CallRecord, Tracker

if TYPE_CHECKING:
    import httpx2
    import pandas as pd

    from workbench._client import Client
    from workbench.config import Settings

__all__ = [
    "APPROVED_CARD",
    "CHALLENGE_CARD",
    "Call",
    "FlowRun",
    "new_transaction_id",
    "redact",
]

#: The sandbox's test card that approves (frictionless with 3-D Secure).
APPROVED_CARD = "tok_test_success"
#: The sandbox's test card that asks for a 3-D Secure challenge.
CHALLENGE_CARD = "tok_test_3ds_challenge"

#: Body fields shown only as a short prefix: bearer assertions and secrets.
_MASKED = frozenset({"pares", "publicHash", "webhookSecret", "secretKey", "signature", "number"})
#: A path segment that is a bearer (the buyer portal's ``publicHash``).
_BEARER_PATH = re.compile(r"(?<=/v1/public/subscriptions/)([^/]{4})[^/]*")


def redact(value: Any) -> Any:
    """A copy of a JSON value with `_MASKED` fields cut to a prefix and an ellipsis."""
    if isinstance(value, dict):
        return {k: (_mask(v) if k in _MASKED else redact(v)) for k, v in value.items()}
    if isinstance(value, list):
        return [redact(v) for v in value]
    return value


def _mask(value: Any) -> Any:
    if isinstance(value, str) and value:
        return value[:4] + "…"
    return value


def new_transaction_id(prefix: str = "order") -> str:
    """A merchant transaction id unique to this run (``order-3f9c0a1b2c4d``)."""
    return f"{prefix}-{uuid.uuid4().hex[:12]}"


_ID = re.compile(r"(?<=/)(pay|rfn|sub|cus)_[0-9A-Za-z]+")


def _change(before: str | None, after: str | None) -> str:
    if before == after:
        return after or ""
    return f"{before or '(new)'} → {after or '?'}"


@dataclass(frozen=True, slots=True)
class Call:
    """One request a flow made and the answer it got (bodies already redacted).

    Attributes:
        step: 1-based position in the flow.
        method: the HTTP method.
        path: the route path.
        request: the JSON body sent (``None`` for none).
        status: the HTTP status of the final attempt.
        response: the JSON body received.
        request_id: the ``X-Request-Id`` answered.
        idempotency_key: the Idempotency-Key sent.
        retries: retries the client took.
        replayed: whether the answer was a replay of an earlier call's.
        headers: the request headers that sign it and make it idempotent, the signature
            cut (`workbench.flows._http.SHOWN_HEADERS`).
        dashboard_url: its page in the local sandbox's dashboard (``None`` elsewhere).
    """

    step: int
    method: str
    path: str
    request: Any
    status: int
    response: Any
    request_id: str | None
    idempotency_key: str | None
    retries: int
    replayed: bool
    headers: tuple[tuple[str, str], ...] = ()
    dashboard_url: str | None = None

    @property
    def error_code(self) -> str | None:
        """The envelope's ``code`` of an error answer."""
        if self.status >= 400 and isinstance(self.response, dict):
            code = self.response.get("code")
            return code if isinstance(code, str) else None
        return None

    def describe(self) -> str:
        """``POST /v1/payments/card -> 201`` (with the error code, if any)."""
        tail = f" {self.error_code}" if self.error_code else ""
        return f"{self.method} {self.path} -> {self.status}{tail}"


@dataclass
class FlowRun:
    """The record of one flow: parameters, calls, state history, checked outcomes.

    Attributes:
        name: the flow's name (``preauth``...).
        params: the parameters it ran with.
        calls: every request, in order.
        lines: the flow's narrative, one deterministic line per step.
        outcome: the facts the flow established (statuses, amounts), for assertions.
        object_id: the main object (a payment id) whose state history is shown.
        tracker: the state tracker that watched the calls.
        noted: states learned without a call (`note_state`), as (object id, state).
        settings: the recorded client's settings, once `recording` (each call links
            to its page in the local sandbox's dashboard: `Settings.request_page`).
    """

    name: str
    params: dict[str, Any]
    calls: list[Call] = field(default_factory=list)
    lines: list[str] = field(default_factory=list)
    outcome: dict[str, Any] = field(default_factory=dict)
    object_id: str | None = None
    tracker: Tracker = field(default_factory=Tracker)
    noted: list[tuple[str, str]] = field(default_factory=list)
    settings: Settings | None = None

    @contextmanager
    def recording(self, client: Client) -> Iterator[FlowRun]:
        """Record every call ``client`` makes inside the ``with`` block."""
        self.settings = client._settings
        self.tracker.attach(client)
        client.add_observer(self._observe)
        try:
            yield self
        finally:
            client.remove_observer(self._observe)
            self.tracker.detach()

    @contextmanager
    def unrecorded(self, client: Client) -> Iterator[None]:
        """Leave the calls inside the block out (polls whose number depends on timing).

        Follow it with one recorded read, so the state it reached is in the history.
        """
        client.remove_observer(self._observe)
        client.remove_observer(self.tracker.observe)
        try:
            yield
        finally:
            client.add_observer(self.tracker.observe)
            client.add_observer(self._observe)

    def _observe(self, info: ResponseInfo, body: Any) -> None:
        sent = info.http_response.request.content
        self.calls.append(
            Call(
                step=len(self.calls) + 1,
                method=info.method,
                path=_BEARER_PATH.sub(r"\1…", info.path),
                request=redact(decode_body(sent)),
                status=info.status_code,
                response=redact(body),
                request_id=info.request_id,
                idempotency_key=info.idempotency_key,
                retries=info.retries,
                replayed=info.replayed,
                headers=shown_headers(info.http_response.request),
                dashboard_url=self.request_page(info.request_id),
            )
        )

    def record_response(self, response: httpx2.Response) -> Call:
        """Keep a call made without the client (plain ``httpx2``), redacted like the others."""
        request = response.request
        try:
            body: Any = response.json()
        except ValueError:
            body = response.text or None
        call = Call(
            step=len(self.calls) + 1,
            method=request.method,
            path=_BEARER_PATH.sub(r"\1…", request.url.path),
            request=redact(decode_body(request.content)),
            status=response.status_code,
            response=redact(body),
            request_id=response.headers.get("X-Request-Id"),
            idempotency_key=request.headers.get("Idempotency-Key"),
            retries=0,
            replayed=response.headers.get("Idempotent-Replayed", "").lower() == "true",
            headers=shown_headers(request),
            dashboard_url=self.request_page(response.headers.get("X-Request-Id")),
        )
        self.calls.append(call)
        # A record without an object keeps the tracker's records in step with the calls.
        self.tracker.records.append(
            CallRecord(
                time=datetime.now(UTC), method=call.method, path=call.path,
                status_code=call.status, request_id=call.request_id,
                idempotency_key=call.idempotency_key, retries=0, object_id=None,
                action=call.method, state_before=None, state_after=None,
                error_code=call.error_code,
            )
        )  # fmt: skip
        return call

    def request_page(self, request_id: str | None) -> str | None:
        """A call's page in the local sandbox's dashboard (``None``: not the local sandbox,
        or not recording a client)."""
        return None if self.settings is None else self.settings.request_page(request_id)

    def say(self, line: str) -> None:
        """Add a line to the narrative (kept free of ids and times: it is compared)."""
        self.lines.append(line)

    @property
    def last(self) -> Call | None:
        """The last call made."""
        return self.calls[-1] if self.calls else None

    def states(self, object_id: str | None = None) -> list[str]:
        """The states the main object (or ``object_id``) went through, in order."""
        target = object_id or self.object_id
        if not target:
            return []
        states = self.tracker.states(target)
        for noted_id, state in self.noted:
            if noted_id == target and (not states or states[-1] != state):
                states.append(state)
        return states

    def state_path(self, object_id: str | None = None) -> StatePath:
        """The observed state history as a small diagram (SVG in a notebook)."""
        target = object_id or self.object_id
        steps: list[tuple[str, str]] = []
        for record in self.tracker.records:
            if record.object_id != target or record.state_after is None:
                continue
            if steps and steps[-1][1] == record.state_after:
                continue
            label = "observed" if record.method == "GET" else record.action
            steps.append((label, record.state_after))
        for noted_id, state in self.noted:
            if noted_id == target and (not steps or steps[-1][1] != state):
                steps.append(("webhook", state))
        return StatePath(tuple(steps))

    def frame(self) -> pd.DataFrame:
        """The calls as a DataFrame: step, request, status, error, state change, retries."""
        import pandas as pd

        states = {
            i: (r.state_before, r.state_after) for i, r in enumerate(self.tracker.records, start=1)
        }
        rows = []
        for call in self.calls:
            before, after = states.get(call.step, (None, None))
            rows.append(
                {
                    "step": call.step,
                    "request": f"{call.method} {_ID.sub('{id}', call.path)}",
                    "status": call.status,
                    "error": call.error_code or "",
                    "state": _change(before, after),
                    "retries": call.retries,
                    "replayed": call.replayed,
                }
            )
        columns = ["step", "request", "status", "error", "state", "retries", "replayed"]
        return pd.DataFrame(rows, columns=columns)

    def exchange(self, step: int | None = None) -> str:
        """One call (default: the last) as request and response JSON, for reading."""
        call = self.calls[-1] if step is None else self.calls[step - 1]
        parts = [f"→ {call.method} {call.path}"]
        if call.request is not None:
            parts.append(json.dumps(call.request, indent=2, ensure_ascii=False))
        parts.append(f"← {call.status}")
        parts.append(json.dumps(call.response, indent=2, ensure_ascii=False))
        return "\n".join(parts)

    def exchanges(self) -> Exchanges:
        """Every call as it went over the wire, folded (HTML) or one line each (text)."""
        return Exchanges(self.calls)

    def note_state(self, object_id: str, state: str) -> None:
        """Record a state learned without a call of the client (from a verified webhook).

        It follows the states the calls showed, in `states` and `state_path`.
        """
        self.noted.append((object_id, state))

    def summary(self) -> str:
        """A short text that is the same on every run with the same parameters."""
        head = f"{self.name}: {len(self.calls)} requests"
        path = " → ".join(self.states())
        lines = [head, *(f"  {line}" for line in self.lines)]
        if path:
            lines.append(f"  states: {path}")
        return "\n".join(lines)

    def __repr__(self) -> str:
        return f"FlowRun(name={self.name!r}, calls={len(self.calls)}, outcome={self.outcome!r})"
