"""Running the flows against one target and keeping every exchange, redacted.

The flows are `workbench.flows.FLOWS`, the code behind the notebooks' forms. Each runs
on a `Client` whose transport is a `RecordingTransport`: it keeps every attempt (a
retried call is two exchanges, the first with its ``Retry-After``). The flow's own
`FlowRun` says which calls are part of the lesson: polls it left out of its record
(``FlowRun.unrecorded``, whose number depends on timing) are left out here too.

On a target without the sandbox's control routes the transport refuses a control call
before it is sent, which stops the flow there; the steps from that one on are reported
as skipped with the reason, never silently dropped.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import httpx2

from workbench._client import Client
from workbench._exceptions import APIError
from workbench._version import __version__
from workbench.config import Settings
from workbench.flows import FLOWS
from workbench.flows._http import decode_body
from workbench.parity._model import Exchange, FlowRecord, Recording, Stop
from workbench.spec.redaction import Redactor

if TYPE_CHECKING:
    from workbench.flows import Call, FlowRun, FlowSpec

__all__ = [
    "CONTROL_PREFIX",
    "ControlRouteMissing",
    "FlowRecorder",
    "RecordingTransport",
    "Target",
    "TargetError",
    "record",
]

#: Paths under this prefix are the local sandbox's control routes.
CONTROL_PREFIX = "/sandbox/"
#: Fields of an event's ``data`` that name the object it is about.
_OBJECT_FIELDS = ("paymentId", "refundId", "sessionId", "subscriptionId")


class ControlRouteMissing(Exception):
    """A flow asked for a control route of a target that has none (raised before sending)."""

    def __init__(self, method: str, path: str) -> None:
        super().__init__(f"{method} {path}")
        self.method = method
        self.path = path


class TargetError(Exception):
    """The target cannot be used at all (nothing answers, or it refuses the keys)."""


@dataclass(frozen=True, slots=True)
class Target:
    """A service to run the flows against.

    Attributes:
        name: how reports name it (``fresh local sandbox at http://…``, a base URL).
        settings: its base URL and keys.
    """

    name: str
    settings: Settings

    def __repr__(self) -> str:
        return f"Target(name={self.name!r}, settings={self.settings!r})"


class RecordingTransport(httpx2.BaseTransport):
    """Sends through ``inner`` and keeps each exchange, redacted, in `exchanges`.

    Args:
        inner: the transport that really sends.
        redactor: what cuts secrets out before an exchange is kept.
        control_routes: whether the target has control routes; when ``False`` a request
            for one raises `ControlRouteMissing` instead of being sent.
    """

    def __init__(
        self, inner: httpx2.BaseTransport, redactor: Redactor, *, control_routes: bool
    ) -> None:
        self._inner = inner
        self._redactor = redactor
        self._control_routes = control_routes
        self.exchanges: list[Exchange] = []

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        path = request.url.path
        control = path.startswith(CONTROL_PREFIX)
        if control and not self._control_routes:
            raise ControlRouteMissing(request.method, path)
        response = self._inner.handle_request(request)
        content = response.read()
        query = request.url.query.decode("ascii", "replace")
        redact = self._redactor
        self.exchanges.append(
            Exchange(
                method=request.method,
                path=redact.path(path + (f"?{query}" if query else "")),
                status=response.status_code,
                request_id=response.headers.get("X-Request-Id"),
                replayed=response.headers.get("Idempotent-Replayed"),
                retry_after=response.headers.get("Retry-After"),
                request=redact.json(decode_body(request.content)),
                response=redact.json(decode_body(content)),
                control=control,
            )
        )
        return response

    def close(self) -> None:
        self._inner.close()


def _from_call(call: Call, redactor: Redactor) -> Exchange:
    """An exchange rebuilt from the flow's own record (a call that bypassed the client)."""
    return Exchange(
        method=call.method,
        path=redactor.path(call.path),
        status=call.status,
        request_id=call.request_id,
        replayed="true" if call.replayed else None,
        request=redactor.json(call.request),
        response=redactor.json(call.response),
        control=call.path.startswith(CONTROL_PREFIX),
    )


def _lesson(seen: list[Exchange], calls: list[Call], redactor: Redactor) -> list[Exchange]:
    """The exchanges of the calls the flow recorded, with each call's retried attempts."""
    kept: list[Exchange] = []
    cursor = 0
    for call in calls:
        found = next(
            (
                i
                for i in range(cursor, len(seen))
                if seen[i].method == call.method
                and seen[i].status == call.status
                and seen[i].request_id == call.request_id
            ),
            None,
        )
        if found is None:
            kept.append(_from_call(call, redactor))
            continue
        kept.extend(seen[max(cursor, found - call.retries) : found + 1])
        cursor = found + 1
    return kept


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)
    elif isinstance(value, str):
        yield value


def _mentioned(exchanges: Iterable[Exchange]) -> set[str]:
    """Every string the flow's exchanges hold: paths' segments and bodies' values."""
    found: set[str] = set()
    for exchange in exchanges:
        found.update(exchange.path.split("?", 1)[0].split("/"))
        found.update(_strings(exchange.request))
        found.update(_strings(exchange.response))
    return found


def _events_of(response: Any, mentioned: set[str]) -> Any:
    """The events about the flow's objects, without the sandbox's delivery bookkeeping."""
    if not isinstance(response, dict) or not isinstance(response.get("items"), list):
        return response
    mine = []
    for event in response["items"]:
        data = event.get("data") if isinstance(event, dict) else None
        if isinstance(data, dict) and any(data.get(f) in mentioned for f in _OBJECT_FIELDS):
            mine.append({k: v for k, v in event.items() if k != "delivery"})
    return {"items": mine}


class FlowRecorder:
    """Runs flows against one target, one `Client` per flow, and keeps their exchanges.

    Args:
        target: where to send the flows' requests.
        transport: the transport that really sends (default: a new HTTP transport per flow).
    """

    def __init__(
        self, target: Target, *, transport: Callable[[], httpx2.BaseTransport] | None = None
    ) -> None:
        self.target = target
        self._transport = transport or httpx2.HTTPTransport
        self._redactor = Redactor([target.settings.secret_key])
        self._control_routes: bool | None = None
        self.started_at = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")

    @contextmanager
    def _client(self, control_routes: bool) -> Iterator[tuple[Client, RecordingTransport]]:
        transport = RecordingTransport(
            self._transport(), self._redactor, control_routes=control_routes
        )
        with Client(settings=self.target.settings, transport=transport) as client:
            yield client, transport

    @property
    def control_routes(self) -> bool:
        """Whether the target has the sandbox's control routes (asked once, then known).

        Raises:
            TargetError: nothing answers, or the target refuses the keys.
        """
        if self._control_routes is None:
            self._control_routes = self._probe()
        return self._control_routes

    def _probe(self) -> bool:
        with self._client(control_routes=True) as (client, _):
            try:
                client.sandbox.fixtures()
            except APIError as exc:
                if exc.http_status in (401, 403):
                    raise TargetError(
                        f"{self.target.name} refuses the keys: {exc.http_status} {exc.code}"
                    ) from None
                return False
            except Exception as exc:  # no answer at all: connection refused, timeout...
                raise TargetError(f"{self.target.name}: {type(exc).__name__}: {exc}") from None
        return True

    def run(self, spec: FlowSpec) -> FlowRecord:
        """Run one flow with its default parameters and return what it exchanged."""
        control_routes = self.control_routes
        params = {p.name: p.default for p in spec.params}
        with self._client(control_routes) as (client, transport):
            run: FlowRun | None = None
            stopped: Stop | None = None
            try:
                run = spec(client)
            except ControlRouteMissing as exc:
                stopped = Stop(
                    kind="control",
                    step=len(transport.exchanges) + 1,
                    reason=f"needs the sandbox control route {exc}",
                )
            except Exception as exc:  # a flow may fail in any way on another service
                reason = self._redactor.text(f"{type(exc).__name__}: {exc}".splitlines()[0])
                stopped = Stop(kind="error", step=len(transport.exchanges) + 1, reason=reason)
            exchanges = (
                _lesson(transport.exchanges, run.calls, self._redactor)
                if run is not None
                else list(transport.exchanges)
            )
            if control_routes:
                exchanges.extend(self._events(client, transport, exchanges))
        return FlowRecord(
            name=spec.name,
            params=params,
            exchanges=tuple(exchanges),
            states=tuple(run.states()) if run is not None else (),
            stopped=stopped,
        )

    @staticmethod
    def _events(
        client: Client, transport: RecordingTransport, exchanges: list[Exchange]
    ) -> list[Exchange]:
        """Parity's own read after the flow: the events of the objects the flow touched."""
        before = len(transport.exchanges)
        with contextlib.suppress(APIError):  # the answer is kept below, whatever it was
            client.sandbox.events()
        answered = transport.exchanges[before:]
        if not answered:
            return []
        last = answered[-1]
        response = _events_of(last.response, _mentioned(exchanges))
        return [last.model_copy(update={"response": response, "observed": True})]

    def recording(self, flows: Iterable[FlowRecord]) -> Recording:
        """The records of this target's flows as a `Recording`."""
        done = tuple(flows)  # runs them, if ``flows`` is lazy: the probe happens first
        return Recording(
            created_at=self.started_at,
            workbench_version=__version__,
            target=self.target.name,
            control_routes=self.control_routes,
            flows=done,
        )


def record(
    target: Target,
    names: Iterable[str] | None = None,
    *,
    flows: Mapping[str, FlowSpec] = FLOWS,
    progress: Callable[[FlowRecord], None] | None = None,
) -> Recording:
    """Run the flows (all, or those named) against ``target`` and keep every exchange.

    Args:
        target: the service to run them against.
        names: the flows to run, in this order (default: every flow of the catalogue).
        flows: the catalogue to take them from.
        progress: called with each flow's record as soon as it has run.

    Raises:
        TargetError: the target cannot be used.
    """
    recorder = FlowRecorder(target)
    records = []
    for name in names or list(flows):
        done = recorder.run(flows[name])
        records.append(done)
        if progress is not None:
            progress(done)
    return recorder.recording(records)
