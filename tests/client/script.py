"""A scripted transport for the offline client tests: replies in order, requests recorded.

`Script` goes into ``httpx2.MockTransport``; `ok` and `envelope` build the replies it gives.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import httpx2

__all__ = ["Reply", "Script", "envelope", "ok"]

Reply = httpx2.Response | Exception | Callable[[httpx2.Request], httpx2.Response]


def envelope(
    code: str, status: int, *, request_id: str = "req-1", **headers: str
) -> httpx2.Response:
    """An error response in the service's envelope."""
    body = {"code": code, "message": f"{code} happened", "requestId": request_id}
    return httpx2.Response(status, json=body, headers=headers)


def ok(body: dict[str, Any], status: int = 200, request_id: str = "req-ok") -> httpx2.Response:
    """A success response with an X-Request-Id."""
    return httpx2.Response(status, json=body, headers={"X-Request-Id": request_id})


@dataclass
class Script:
    """Answers requests from a list of replies, in order; records every request.

    The last reply repeats once the list is used up.
    """

    replies: list[Reply] = field(default_factory=list)
    requests: list[httpx2.Request] = field(default_factory=list)

    def __call__(self, request: httpx2.Request) -> httpx2.Response:
        request.read()
        self.requests.append(request)
        index = min(len(self.requests) - 1, len(self.replies) - 1)
        reply = self.replies[index]
        if isinstance(reply, Exception):
            raise reply
        if isinstance(reply, httpx2.Response):
            return reply
        return reply(request)

    def bodies(self) -> list[Any]:
        return [json.loads(r.content) if r.content else None for r in self.requests]

    def header(self, name: str) -> list[str | None]:
        return [r.headers.get(name) for r in self.requests]
