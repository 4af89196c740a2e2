"""Offline fixtures: a scripted transport that records every attempt, a fake clock and sleep.

The pieces the tests also import (`Script`, `FakeTime`, the keys) are modules beside this one.
"""

from __future__ import annotations

from collections.abc import Iterator

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
