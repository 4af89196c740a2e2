"""Offline fixtures: a scripted transport that records every attempt, a fake clock and sleep.

The pieces the tests also import (`Script`, `FakeTime`, the keys) are modules beside this one.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx2
import pytest

from tests.client.fake_time import FakeTime
from tests.client.offline import API_KEY, BASE_URL, SECRET_KEY
from tests.client.script import Script
from workbench._client import Client


@pytest.fixture
def script() -> Script:
    return Script()


@pytest.fixture
def fake_time() -> FakeTime:
    return FakeTime()


@pytest.fixture
def client(script: Script, fake_time: FakeTime) -> Iterator[Client]:
    with Client(
        API_KEY, SECRET_KEY, BASE_URL, transport=httpx2.MockTransport(script), log_level="none"
    ) as c:
        c._sleep = fake_time.sleep
        c._auth.clock = fake_time.clock
        yield c


@pytest.fixture(scope="session")
def _span_recording() -> Any:
    """The SDK's in-memory exporter behind the global tracer provider, off between tests."""
    from opentelemetry import trace
    from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    class Recording(SimpleSpanProcessor):
        on = False

        def on_end(self, span: ReadableSpan) -> None:
            if self.on:
                super().on_end(span)

    provider = trace.get_tracer_provider()
    if not isinstance(provider, TracerProvider):
        provider = TracerProvider()
        trace.set_tracer_provider(provider)
    recording = Recording(InMemorySpanExporter())
    provider.add_span_processor(recording)
    return recording


@pytest.fixture
def span_exporter(_span_recording: Any) -> Iterator[Any]:
    """An ``InMemorySpanExporter`` holding the spans that end during the test."""
    exporter = _span_recording.span_exporter
    exporter.clear()
    _span_recording.on = True
    yield exporter
    _span_recording.on = False
    exporter.clear()
