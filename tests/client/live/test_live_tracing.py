"""The client under OpenTelemetry's httpx2 instrumentation, against the real sandbox.

``HTTPX2ClientInstrumentor`` (opentelemetry-instrumentation-httpx 0.66b2 and later)
instruments httpx2's transports; its span for each request nests under the client's
attempt span, and the sandbox still verifies the signature of a request that now carries
``traceparent``. (Its ``HTTPXClientInstrumentor`` instruments the ``httpx`` package only,
which the client does not use.)
"""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

from tests.client.live.target import Live
from workbench._client import AsyncClient, Client


def _by_scope(exporter: Any) -> tuple[list[Any], list[Any]]:
    spans = exporter.get_finished_spans()
    ours = [s for s in spans if s.instrumentation_scope.name == "workbench"]
    theirs = [
        s
        for s in spans
        if s.instrumentation_scope.name.startswith("opentelemetry.instrumentation.httpx")
    ]
    return ours, theirs


def test_httpx2_instrumentation_nests_under_each_attempt_of_the_sync_client(
    client: Client, span_exporter: Any
) -> None:
    from opentelemetry.instrumentation.httpx import HTTPX2ClientInstrumentor

    instrumentor = HTTPX2ClientInstrumentor()
    instrumentor.instrument()
    try:
        span_exporter.clear()
        charge = client.payments.charge_card(
            transaction_id=f"trace-{uuid.uuid4().hex[:12]}",
            amount=12_500,
            card_token="tok_test_success",
        )
    finally:
        instrumentor.uninstrument()
    assert charge.status == "captured"  # signed, verified, answered: traceparent is harmless
    [attempt], [request] = _by_scope(span_exporter)
    assert request.parent is not None
    assert request.parent.span_id == attempt.context.span_id
    assert request.context.trace_id == attempt.context.trace_id
    assert attempt.attributes["workbench.request_id"] == charge.request_id
    assert attempt.attributes["workbench.attempt"] == 1
    # The instrumentation's older attribute name, unless OTEL_SEMCONV_STABILITY_OPT_IN says.
    status = request.attributes.get("http.response.status_code")
    assert (status or request.attributes["http.status_code"]) == 201


def test_httpx2_instrumentation_nests_under_each_attempt_of_the_async_client(
    live: Live, span_exporter: Any
) -> None:
    from opentelemetry.instrumentation.httpx import HTTPX2ClientInstrumentor

    async def run() -> Any:
        async with AsyncClient(live.api_key, live.secret_key, live.base_url) as client:
            return await client.sandbox.fixtures()

    instrumentor = HTTPX2ClientInstrumentor()
    instrumentor.instrument()
    try:
        span_exporter.clear()
        fixtures = asyncio.run(run())
    finally:
        instrumentor.uninstrument()
    assert fixtures.store_id
    [attempt], [request] = _by_scope(span_exporter)
    assert request.parent is not None
    assert request.parent.span_id == attempt.context.span_id
    assert attempt.attributes["http.request.method"] == "GET"
    assert attempt.attributes["workbench.request_id"]
