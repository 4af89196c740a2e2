"""Fixtures for the browser tests: the system's Chromium, a sandbox, a webhook receiver.

Chromium is the operating system's package (``scripts/ensure-chromium``), launched by
its path with Playwright; no browser is ever downloaded. Where it is missing, every
test here is skipped and the reason printed. One browser serves all the tests of this
package; each test gets a fresh context (cookies, storage) at phone width.

The buyer's ``returnUrl`` is a tiny local "merchant" page (`merchant`) on
127.0.0.1, so the browser really lands there without leaving the machine. What the
tests import (the buyer's cards and steps, screenshots) is in the modules beside this one.
The browser asks for English unless a test parametrizes `language` (``"tr"``).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from http.server import ThreadingHTTPServer
from typing import Any

import pytest

from tests.browser.buyer import BROWSER_LOCALES, PHONE
from tests.browser.merchant import SHOP, MerchantPage
from tests.browser.screenshots import Shots
from tests.chromium import chromium as launch_chromium
from tests.chromium import serving
from workbench import Client
from workbench.sandbox import SandboxConfig, SandboxServer
from workbench.webhooks import WebhookListener


@pytest.fixture(scope="package")
def chromium() -> Iterator[Any]:
    """The system's Chromium under Playwright, headless (skips when it is not installed).

    Package-scoped: the sync API runs an event loop on this thread until it stops, and
    later tests (asyncio.run, the docs' own browser) need the thread back.
    """
    # SHOP is mapped here rather than in a second browser of its own (a launch is about
    # a CPU-second); no other test visits it.
    rules = f"--host-resolver-rules=MAP {SHOP} 127.0.0.1"
    with launch_chromium("the browser tests", rules) as browser:
        yield browser


@pytest.fixture(scope="package")
def merchant() -> Iterator[str]:
    """The merchant's return page: ``http://127.0.0.1:<port>/orders/return?order=42``."""
    with serving(ThreadingHTTPServer(("127.0.0.1", 0), MerchantPage)) as port:
        yield f"http://127.0.0.1:{port}/orders/return?order=42"


@pytest.fixture(scope="package")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SandboxServer]:
    """A sandbox of the browser tests' own; the reconciler runs when a test ticks it."""
    db = tmp_path_factory.mktemp("browser-sandbox") / "sandbox.db"
    config = SandboxConfig(db_url=f"sqlite:///{db}", run_reconciler_in_background=False)
    with SandboxServer(config) as running:
        yield running


@pytest.fixture(scope="package")
def client(server: SandboxServer) -> Iterator[Client]:
    """A signed client of the demo merchant (the merchant's server)."""
    with Client(
        base_url=server.base_url, api_key=server.config.api_key, secret_key=server.config.secret_key
    ) as c:
        yield c


@pytest.fixture
def hooks(client: Client) -> Iterator[WebhookListener]:
    """A local webhook receiver that checks each delivery's signature."""
    secret = client.sandbox.fixtures().webhook_secret or ""
    with WebhookListener(secret) as listener:
        yield listener


@pytest.fixture
def language() -> str:
    """The browser's language (its ``Accept-Language``); a test parametrizes it for Turkish."""
    return "en"


@pytest.fixture
def page(chromium: Any, language: str) -> Iterator[Any]:
    """A fresh browser context and page at phone width, in the browser's `language`."""
    context = chromium.new_context(viewport=PHONE, locale=BROWSER_LOCALES[language])
    context.set_default_timeout(10_000)
    browser_page = context.new_page()
    try:
        yield browser_page
    finally:
        context.close()


@pytest.fixture
def shot(request: pytest.FixtureRequest) -> Shots:
    """``shot(page, "step")`` saves ``artifacts/screenshots/<test>-NN-step.png``."""
    return Shots(request.node.name)


@pytest.fixture
def new_session(client: Client, hooks: WebhookListener, merchant: str) -> Callable[..., Any]:
    """Creates sessions as the merchant's server would: returnUrl and callbackUrl local."""

    def create(**extra: Any) -> Any:
        fields: dict[str, Any] = {
            "transaction_id": f"order-{uuid.uuid4().hex[:16]}",
            "amount": 123_456,
            "description": "Kitap siparişi #42",
            "return_url": merchant,
            "callback_url": hooks.url,
            **extra,
        }
        return client.sessions.create(**fields)

    return create
