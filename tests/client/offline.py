"""The offline client's keys and address, and an async client built on a script.

The ``client`` fixture (``conftest.py`` beside this module) is the sync client on the same
keys; `make_async_client` is its async twin, made inside the test's event loop.
"""

from __future__ import annotations

from typing import Any

import httpx2

from tests.client.fake_time import FakeTime
from tests.client.script import Script
from workbench._client import AsyncClient

__all__ = ["API_KEY", "BASE_URL", "SECRET_KEY", "make_async_client"]

API_KEY = "pk_test_unit_key_0123456789"
SECRET_KEY = "sk_test_unit_secret_abcdefghijklmnop"
BASE_URL = "http://service.test"


def make_async_client(script: Script, fake_time: FakeTime, **kwargs: Any) -> AsyncClient:
    """An AsyncClient on the same script and fake time (create it inside the event loop)."""
    c = AsyncClient(API_KEY, SECRET_KEY, BASE_URL, transport=httpx2.MockTransport(script), **kwargs)
    c._sleep = fake_time.async_sleep
    c._auth.clock = fake_time.clock
    return c
