"""Offline fixtures: a scripted transport that records every attempt, a fake clock and sleep."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest

from workbench._client import AsyncClient, Client

API_KEY = "pk_test_unit_key_0123456789"
SECRET_KEY = "sk_test_unit_secret_abcdefghijklmnop"
BASE_URL = "http://service.test"

Reply = httpx.Response | Exception | Callable[[httpx.Request], httpx.Response]


def envelope(
    code: str, status: int, *, request_id: str = "req-1", **headers: str
) -> httpx.Response:
    """An error response in the service's envelope."""
    body = {"code": code, "message": f"{code} happened", "requestId": request_id}
    return httpx.Response(status, json=body, headers=headers)


def ok(body: dict[str, Any], status: int = 200, request_id: str = "req-ok") -> httpx.Response:
    """A success response with an X-Request-Id."""
    return httpx.Response(status, json=body, headers={"X-Request-Id": request_id})


@dataclass
class Script:
    """Answers requests from a list of replies, in order; records every request.

    The last reply repeats once the list is used up.
    """

    replies: list[Reply] = field(default_factory=list)
    requests: list[httpx.Request] = field(default_factory=list)

    def __call__(self, request: httpx.Request) -> httpx.Response:
        request.read()
        self.requests.append(request)
        index = min(len(self.requests) - 1, len(self.replies) - 1)
        reply = self.replies[index]
        if isinstance(reply, Exception):
            raise reply
        if isinstance(reply, httpx.Response):
            return reply
        return reply(request)

    def bodies(self) -> list[Any]:
        return [json.loads(r.content) if r.content else None for r in self.requests]

    def header(self, name: str) -> list[str | None]:
        return [r.headers.get(name) for r in self.requests]


@dataclass
class FakeTime:
    """A clock that only moves when the client sleeps (or the test advances it)."""

    now: datetime = field(default_factory=lambda: datetime(2026, 3, 14, 9, 26, 53, tzinfo=UTC))
    sleeps: list[float] = field(default_factory=list)

    def clock(self) -> datetime:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += timedelta(seconds=max(seconds, 1.0))

    async def async_sleep(self, seconds: float) -> None:
        self.sleep(seconds)


@pytest.fixture
def script() -> Script:
    return Script()


@pytest.fixture
def fake_time() -> FakeTime:
    return FakeTime()


@pytest.fixture
def client(script: Script, fake_time: FakeTime) -> Iterator[Client]:
    with Client(
        API_KEY, SECRET_KEY, BASE_URL, transport=httpx.MockTransport(script), log_level="none"
    ) as c:
        c._sleep = fake_time.sleep
        c._auth.clock = fake_time.clock
        yield c


def make_async_client(script: Script, fake_time: FakeTime, **kwargs: Any) -> AsyncClient:
    """An AsyncClient on the same script and fake time (create it inside the event loop)."""
    c = AsyncClient(API_KEY, SECRET_KEY, BASE_URL, transport=httpx.MockTransport(script), **kwargs)
    c._sleep = fake_time.async_sleep
    c._auth.clock = fake_time.clock
    return c
