"""Runs of every flow against a target, as `workbench parity` runs them, the wire watched.

`run_flows` records the flows; given a `Seen`, its `SpyTransport` keeps every signature,
bearer, webhook secret and card number that went over the wire, for the test that scans
the written files for them.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import httpx2

from workbench.config import DEFAULT_API_KEY, DEFAULT_SECRET_KEY, Settings
from workbench.parity import FlowRecorder, Recording, Target

__all__ = ["Seen", "SpyTransport", "run_flows"]


@dataclass
class Seen:
    """The secrets that went over the wire during a run: the test scans files for them."""

    values: set[str] = field(default_factory=set)


class SpyTransport(httpx2.BaseTransport):
    """Sends through a real transport and keeps every signature and bearer it sees."""

    def __init__(self, seen: Seen) -> None:
        self._inner = httpx2.HTTPTransport()
        self._seen = seen

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        signature = request.headers.get("X-Signature")
        if signature:
            self._seen.values.add(signature)
        response = self._inner.handle_request(request)
        response.read()
        try:
            body = response.json()
        except ValueError:
            return response
        for item in _walk(body):
            if isinstance(item, dict):
                for key in ("pares", "publicHash", "webhookSecret", "number"):
                    if isinstance(item.get(key), str) and len(item[key]) >= 8:
                        self._seen.values.add(item[key])
        return response

    def close(self) -> None:
        self._inner.close()


def _walk(value: Any) -> Iterator[Any]:
    yield value
    if isinstance(value, dict):
        for item in value.values():
            yield from _walk(item)
    elif isinstance(value, list):
        for item in value:
            yield from _walk(item)


def run_flows(base_url: str, name: str, seen: Seen | None = None) -> Recording:
    """Every flow against ``base_url`` with the demo keys, as `workbench parity` runs them."""
    target = Target(name, Settings(base_url=base_url, api_key=DEFAULT_API_KEY,
                                   secret_key=DEFAULT_SECRET_KEY))  # fmt: skip
    factory = (lambda: SpyTransport(seen)) if seen is not None else None
    recorder = FlowRecorder(target, transport=factory)
    from workbench.flows import FLOWS

    return recorder.recording(recorder.run(spec) for spec in FLOWS.values())
