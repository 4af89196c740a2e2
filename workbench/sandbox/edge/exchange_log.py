"""`ExchangeLog`: each API request and its answer, handed to the request log as they went.

The edge reads the request and holds no store of its own: this layer keeps references
to what the request carried and the answer's status, headers and body chunks, and once
the answer has gone hands them to the sink the composition root gave it
(`workbench.sandbox.exchanges.ExchangeSink`: the request log feature's queue), which
returns at once. Nothing is decoded, copied or redacted here; that is the writer's
work, off the request's path.

It sits just inside the request id, so it sees every answer, refusals by the layers
within included, and the path as received (a trailing slash, which the signature's
diagnosis needs, is dropped by `CanonicalPath` further in). Only a request that
authenticated as a merchant (`RequestState.caller`), or one refused with 401 while
naming an X-Api-Key (a signature refusal, whose merchant the writer finds), is handed
on: the rest belongs to no merchant's log.
"""

from __future__ import annotations

import time

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from workbench.sandbox.context import header_text, request_headers, request_state
from workbench.sandbox.exchanges import Exchange, ExchangeSink

__all__ = ["RESPONSE_BODY_LIMIT", "ExchangeLog"]

#: The most of an answer's body kept: a longer one is cut (no API answer comes near it).
RESPONSE_BODY_LIMIT = 64 * 1024


class ExchangeLog:
    """Hand each merchant's exchange to ``sink`` once its answer has gone.

    Args:
        app: the wrapped application.
        sink: takes the exchanges (the request log), never blocking.
    """

    def __init__(self, app: ASGIApp, sink: ExchangeSink) -> None:
        self.app = app
        self.sink = sink

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        # Every request a merchant's log keeps names its key: the rest pass untouched
        # (the hosted pages, the dashboard's own, its live stream).
        if scope["type"] != "http" or b"x-api-key" not in request_headers(scope):
            await self.app(scope, receive, send)
            return
        at = time.time()
        started = time.perf_counter()
        raw = scope.get("raw_path")
        raw_path = raw.decode("latin-1") if raw else str(scope["path"])
        status = 0
        response_headers: list[tuple[bytes, bytes]] = []
        chunks: list[bytes] = []
        size = 0

        async def capture(message: Message) -> None:
            nonlocal status, response_headers, size
            if message["type"] == "http.response.start":
                status = message["status"]
                response_headers = message.get("headers") or []
            elif message["type"] == "http.response.body":
                chunk = message.get("body", b"")
                if chunk and size < RESPONSE_BODY_LIMIT:
                    chunks.append(chunk)
                    size += len(chunk)
            await send(message)

        try:
            await self.app(scope, receive, capture)
        finally:
            state = request_state(scope)
            caller = state.caller
            api_key = (
                caller.api_key
                if caller is not None
                else header_text(request_headers(scope).get(b"x-api-key"))
                if status == 401
                else None
            )  # a 401 naming a key: a signature refusal, whose merchant the writer finds
            if api_key and status:
                body = chunks[0] if len(chunks) == 1 else b"".join(chunks)
                self.sink.record(
                    Exchange(
                        at,
                        time.perf_counter() - started,
                        str(scope["method"]),
                        raw_path,
                        str(scope["path"]),
                        scope.get("query_string", b""),
                        scope["headers"],
                        state.body,
                        status,
                        response_headers,
                        body[:RESPONSE_BODY_LIMIT],
                        state.request_id,
                        caller.merchant_id if caller is not None else None,
                        api_key,
                    )
                )
