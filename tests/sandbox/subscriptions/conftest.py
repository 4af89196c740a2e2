"""Fixtures: each subscription test starts from reset merchants and leaves them reset.

The server and the clients are the sandbox suite's (``tests/sandbox/conftest.py``). A
subscription test counts what it lists and moves the merchants' business clocks by
months, so both merchants are reset before it (whatever ran before on this worker) and
after it (the tests that follow on the same server expect the wall clock). The routes
the tests call and the clock they move are in ``api.py`` and ``clock.py`` beside this one.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.sandbox.clients import signed_client
from workbench.sandbox import OTHER_API_KEY, OTHER_SECRET_KEY, SandboxServer


@pytest.fixture(autouse=True)
def reset_merchants(request: pytest.FixtureRequest) -> Iterator[None]:
    """Both merchants reset before and after a test of the shared server (not otherwise)."""
    if "server" not in request.fixturenames:
        yield
        return
    server: SandboxServer = request.getfixturevalue("server")
    keys = [(None, None), (OTHER_API_KEY, OTHER_SECRET_KEY)]

    def reset() -> None:
        for api_key, secret_key in keys:
            args = () if api_key is None else (api_key, secret_key)
            with signed_client(server.base_url, *args) as merchant:
                response = merchant.post("/sandbox/reset", json={})
                assert response.status_code == 200, response.text

    reset()
    yield
    reset()
