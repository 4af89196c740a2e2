"""Each attempt of a call is an OpenTelemetry span: request id, attempt, no secret."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from typing import Any

import httpx2
import pytest

from tests.client.fake_time import FakeTime
from tests.client.offline import API_KEY, SECRET_KEY, make_async_client
from tests.client.script import Script, envelope, ok
from workbench._client import Client

CHARGE = {"paymentId": "pay_1", "status": "captured", "amount": 12500, "currency": "TRY"}


def _charge(client: Client) -> Any:
    return client.payments.charge_card(
        transaction_id="order-1", amount=12500, card_token="tok_test_success"
    )


def _workbench_spans(exporter: Any) -> list[Any]:
    return [s for s in exporter.get_finished_spans() if s.instrumentation_scope.name == "workbench"]


def _traceparent(span: Any) -> str:
    """The W3C ``traceparent`` header naming ``span``."""
    context = span.context
    return f"00-{context.trace_id:032x}-{context.span_id:016x}-{context.trace_flags:02x}"


def test_each_attempt_is_a_client_span_with_its_request_id_and_attempt(
    client: Client, script: Script, span_exporter: Any
) -> None:
    from opentelemetry.trace import SpanKind, StatusCode

    script.replies = [
        envelope("SVC-GW-5030", 503, request_id="req-503", **{"X-Request-Id": "req-503"}),
        ok(CHARGE, 201, request_id="req-201"),
    ]
    _charge(client)
    first, second = _workbench_spans(span_exporter)
    key = script.header("Idempotency-Key")[0]
    for span, attempt, status in ((first, 1, 503), (second, 2, 201)):
        assert span.name == "POST"
        assert span.kind is SpanKind.CLIENT
        assert span.attributes["workbench.attempt"] == attempt
        assert span.attributes["http.response.status_code"] == status
        assert span.attributes["http.request.method"] == "POST"
        assert span.attributes["url.full"] == "http://service.test/v1/payments/card"
        assert span.attributes["workbench.idempotency_key"] == key
        assert span.attributes["workbench.action"] == "charge"
    assert first.attributes["workbench.request_id"] == "req-503"
    assert second.attributes["workbench.request_id"] == "req-201"
    assert "http.request.resend_count" not in first.attributes
    assert second.attributes["http.request.resend_count"] == 1
    assert first.status.status_code is StatusCode.ERROR
    assert first.attributes["error.type"] == "503"
    assert second.status.status_code is StatusCode.UNSET


def test_the_request_carries_the_attempt_span_as_traceparent(
    client: Client, script: Script, span_exporter: Any
) -> None:
    script.replies = [envelope("SVC-GW-5030", 503), ok(CHARGE, 201)]
    _charge(client)
    spans = _workbench_spans(span_exporter)
    sent = script.header("traceparent")
    assert sent == [_traceparent(s) for s in spans]


def test_no_answer_is_a_failed_span_named_by_the_exception_class_only(
    client: Client, script: Script, span_exporter: Any
) -> None:
    from opentelemetry.trace import StatusCode

    script.replies = [httpx2.ConnectError(f"refused by 10.0.0.1 for {SECRET_KEY}"), ok(CHARGE)]
    _charge(client)
    failed, answered = _workbench_spans(span_exporter)
    assert failed.status.status_code is StatusCode.ERROR
    assert failed.attributes["error.type"] == "ConnectError"
    assert failed.events == ()  # no exception event: its message could carry anything
    assert "http.response.status_code" not in failed.attributes
    assert answered.attributes["workbench.attempt"] == 2


def test_no_key_signature_or_body_reaches_a_span(
    client: Client, script: Script, span_exporter: Any
) -> None:
    script.replies = [envelope("SVC-GW-5000", 500), ok(CHARGE, 201)]
    client.payments.charge_card(
        transaction_id="order-secret-1", amount=12500, card_token="tok_test_success"
    )
    signatures = [s for s in script.header("X-Signature") if s]
    assert len(signatures) == 2
    spans = span_exporter.get_finished_spans()
    text = repr([(s.name, dict(s.attributes), s.events) for s in spans])
    for value in (SECRET_KEY, API_KEY, *signatures, *(s[:16] for s in signatures)):
        assert value not in text
    for body_value in ("order-secret-1", "tok_test_success", "12500"):
        assert body_value not in text


def test_the_async_client_traces_its_attempts_alike(
    script: Script, fake_time: FakeTime, span_exporter: Any
) -> None:
    script.replies = [envelope("SVC-GW-5030", 503), ok(CHARGE, 201, request_id="req-a")]

    async def run() -> None:
        async with make_async_client(script, fake_time) as client:
            await client.payments.charge_card(
                transaction_id="order-1", amount=12500, card_token="tok_test_success"
            )

    asyncio.run(run())
    spans = _workbench_spans(span_exporter)
    assert [s.attributes["workbench.attempt"] for s in spans] == [1, 2]
    assert spans[1].attributes["workbench.request_id"] == "req-a"
    assert script.header("traceparent") == [_traceparent(s) for s in spans]


def test_a_call_inside_the_applications_span_joins_its_trace(
    client: Client, script: Script, span_exporter: Any
) -> None:
    from opentelemetry import trace

    script.replies = [ok(CHARGE, 201)]
    with trace.get_tracer("shop").start_as_current_span("checkout") as parent:
        _charge(client)
    [attempt] = _workbench_spans(span_exporter)
    assert attempt.parent is not None
    assert attempt.parent.span_id == parent.get_span_context().span_id


@pytest.mark.parametrize(
    "code",
    [
        "import workbench",
        "import workbench\nworkbench.Client('pk_test_x', 'sk_test_x', 'http://127.0.0.1:9').close()",
    ],
)
def test_the_client_imports_no_opentelemetry_until_its_first_request(code: str) -> None:
    out = subprocess.run(
        [sys.executable, "-c", f"import sys\n{code}\nprint(sorted(sys.modules))"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "opentelemetry" not in out
