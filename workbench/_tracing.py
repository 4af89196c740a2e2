"""Spans for the client's attempts, when ``opentelemetry-api`` is installed (it is optional).

Each attempt of a call is one ``CLIENT`` span named by its method (``POST``), as
OpenTelemetry's HTTP conventions name them, current while the request is sent: an HTTP
instrumentation's own span (``HTTPX2ClientInstrumentor`` of
``opentelemetry-instrumentation-httpx``) nests under it, and the request carries the
trace's ``traceparent`` header, which the signature does not cover. Its attributes:

- ``http.request.method``, ``server.address``, ``server.port`` and ``url.full`` (the
  base URL and the path; no query string);
- ``workbench.attempt`` (1 for the first) and, on a retry, ``http.request.resend_count``;
- ``workbench.idempotency_key``, the key every attempt of the call sends;
- ``workbench.action`` (``charge``, ``capture``...) and ``workbench.object_id`` when the
  call names them;
- once answered: ``http.response.status_code`` and ``workbench.request_id`` (the
  answer's ``X-Request-Id``); an error answer or no answer sets ``error.type`` (the status,
  or the exception's class) and the span's status to error.

Nothing else of a request or an answer is read: no key, signature, body or card data
reaches a span. Without ``opentelemetry-api`` nothing is imported and each attempt costs
one check; with it but no SDK's tracer provider set, one look-up and no span.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from workbench._version import __version__

if TYPE_CHECKING:
    import httpx2

    from workbench._options import RequestOptions

__all__ = ["AttemptSpan", "attempt_span"]

#: ``opentelemetry.trace`` once imported; ``None``: opentelemetry-api is not installed.
_TRACE: list[Any] = []
#: The tracer of the provider it came from (a provider set later gets its own).
_TRACERS: dict[int, Any] = {}


def _tracer() -> Any:
    """The tracer of the global provider; ``None`` when spans would go nowhere.

    Until an SDK sets a provider, OpenTelemetry's is a proxy whose spans are dropped:
    an attempt then makes none, and costs a look-up (a no-op span cost about a third of
    an offline call's 90 µs).
    """
    if not _TRACE:
        try:
            from opentelemetry import trace
        except ImportError:
            _TRACE.append(None)
        else:
            _TRACE.append(trace)
    trace = _TRACE[0]
    if trace is None:
        return None
    provider = trace.get_tracer_provider()
    if isinstance(provider, (trace.ProxyTracerProvider, trace.NoOpTracerProvider)):
        return None
    tracer = _TRACERS.get(id(provider))
    if tracer is None:
        tracer = _TRACERS[id(provider)] = provider.get_tracer("workbench", __version__)
    return tracer


class AttemptSpan:
    """What an attempt tells its span once it ends (nothing when tracing is off)."""

    def __init__(self, span: Any = None) -> None:
        self._span = span

    def answered(self, response: httpx2.Response) -> None:
        """The answer's status and request id; an error status marks the span failed."""
        if self._span is None:
            return
        status = response.status_code
        self._span.set_attribute("http.response.status_code", status)
        request_id = response.headers.get("X-Request-Id")
        if request_id:
            self._span.set_attribute("workbench.request_id", request_id)
        if status >= 400:
            self._fail(str(status))

    def failed(self, exc: BaseException) -> None:
        """No answer: the exception's class (never its message) marks the span failed."""
        if self._span is not None:
            self._fail(type(exc).__name__)

    def _fail(self, kind: str) -> None:
        from opentelemetry.trace import Status, StatusCode

        self._span.set_attribute("error.type", kind)
        self._span.set_status(Status(StatusCode.ERROR, kind))


_OFF = AttemptSpan()


@contextmanager
def attempt_span(
    request: httpx2.Request, options: RequestOptions, attempt: int, idempotency_key: str | None
) -> Iterator[AttemptSpan]:
    """One attempt's span, current while ``request`` is sent; ``traceparent`` is added to it.

    Args:
        request: the attempt's request, before it is sent (and signed).
        options: the call's options (its action and object, when it names them).
        attempt: 1 for the first attempt, 2 for the first retry...
        idempotency_key: the call's key, if it sends one.
    """
    tracer = _tracer()
    if tracer is None:
        yield _OFF
        return
    from opentelemetry import propagate
    from opentelemetry.trace import SpanKind

    url = request.url
    attributes: dict[str, str | int] = {
        "http.request.method": request.method,
        "server.address": url.host,
        "url.full": str(url.copy_with(query=None)),
        "workbench.attempt": attempt,
    }
    if url.port is not None:
        attributes["server.port"] = url.port
    if attempt > 1:
        attributes["http.request.resend_count"] = attempt - 1
    if idempotency_key:
        attributes["workbench.idempotency_key"] = idempotency_key
    if options.action:
        attributes["workbench.action"] = options.action
    if options.object_id:
        attributes["workbench.object_id"] = options.object_id
    with tracer.start_as_current_span(
        request.method,
        kind=SpanKind.CLIENT,
        attributes=attributes,
        record_exception=False,  # an exception's message and stack stay out of the span
        set_status_on_exception=False,
    ) as span:
        propagate.inject(request.headers)
        yield AttemptSpan(span)
