"""Fixtures of the dashboard's tests: one sandbox for the folder, a merchant per test.

The tests share one SQLite sandbox (they do not interfere: each makes a merchant of its
own, `POST /sandbox/merchants`); its refused sign-ins wait 0.2 s rather than 1 s, and
its per-address limit is off (a test of the limit starts a sandbox of its own).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest

from tests.sandbox.clients import signed_client
from tests.sandbox.dashboard.pages import (
    REFUSAL_DELAY,
    Merchant,
    new_merchant,
    signed_in_client,
)
from workbench.sandbox import SandboxServer
from workbench.testing import running_sandbox


@pytest.fixture(scope="package")
def dashboard_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SandboxServer]:
    """The folder's sandbox (SQLite file; the reconciler runs when a test moves the clock)."""
    folder: Path = tmp_path_factory.mktemp("dashboard")
    with running_sandbox(
        db_dir=folder,
        run_reconciler_in_background=False,
        public_rate_limit_per_second=0,
        webhook_allow_private=True,
    ) as running:
        running.app.state.dashboard.failed_sign_in_delay = REFUSAL_DELAY
        yield running


@pytest.fixture
def merchant(dashboard_server: SandboxServer) -> Merchant:
    """A merchant of this test's own."""
    return new_merchant(dashboard_server.base_url)


@pytest.fixture
def page(dashboard_server: SandboxServer, merchant: Merchant) -> Iterator[httpx2.Client]:
    """A client signed in to the dashboard as `merchant` (redirects not followed)."""
    with signed_in_client(dashboard_server.base_url, merchant) as http:
        yield http


@pytest.fixture
def api(dashboard_server: SandboxServer, merchant: Merchant) -> Iterator[httpx2.Client]:
    """A client signing the API as `merchant`."""
    with signed_client(
        dashboard_server.base_url, api_key=merchant.api_key, secret_key=merchant.secret_key
    ) as http:
        yield http
