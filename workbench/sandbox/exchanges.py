"""`Exchange`: one request and its answer as the edge saw them, raw, for the request log.

The edge (`workbench.sandbox.edge.exchange_log`) captures it and hands it to an
`ExchangeSink`; the request log feature (`workbench.sandbox.requestlog`) is the sink.
Both meet here, below them, so neither imports the other. Nothing is decoded, copied
or redacted while the request is served: the bytes are kept as they came and went, and
the sink's writer, off the request's path, redacts them before anything is stored.
It holds the signature and may hold card data: never log, show or keep it as it is.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

__all__ = ["Exchange", "ExchangeSink"]


@dataclass(slots=True, repr=False)
class Exchange:
    """One signed (or signature-refused) API request and its answer, as they went.

    Attributes:
        at: when it arrived (wall clock, seconds since the epoch).
        latency: seconds from its arrival to the last byte of its answer.
        method: the HTTP method.
        raw_path: the path as received (before the edge dropped a trailing slash).
        path: the path served.
        query: the query string as received.
        headers: the request's headers as ASGI gave them (lower-case names).
        body: the request body as received (the bytes the signature covered).
        status: the answer's HTTP status.
        response_headers: the answer's headers.
        response_body: the answer's body (cut at the edge's limit).
        request_id: the request's own id.
        merchant_id: the merchant it authenticated as; ``None`` when it was refused
            before (the writer finds the merchant from ``api_key``).
        api_key: the X-Api-Key it carried.
    """

    at: float
    latency: float
    method: str
    raw_path: str
    path: str
    query: bytes
    headers: list[tuple[bytes, bytes]]
    body: bytes
    status: int
    response_headers: list[tuple[bytes, bytes]]
    response_body: bytes
    request_id: str
    merchant_id: str | None
    api_key: str

    def __repr__(self) -> str:  # never the headers or bodies: they carry the signature
        return f"Exchange({self.method} {self.path} -> {self.status}, {self.request_id})"


class ExchangeSink(Protocol):
    """Where the edge hands each exchange: it must return at once, never block or raise."""

    def record(self, exchange: Exchange) -> None:
        """Take ``exchange`` for the request log (or drop it, counted, when full)."""
        ...
