"""The dashboard in a real browser (the system's Chromium), at phone width (390 px).

One sandbox serves the module's tests (webhooks to loopback allowed, for the local
receiver); each test signs in as a merchant of its own (`POST /sandbox/merchants`),
but the banner link's, which is the demo merchant's. Every page a test visits is
checked for sideways scrolling.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import httpx2
import pytest

from tests.browser.screenshots import Shots
from tests.sandbox.bodies import charge_under, txn
from tests.sandbox.clients import signed_client
from tests.sandbox.dashboard.pages import Merchant, new_merchant
from tests.sandbox.dashboard.receiver import receiving
from workbench.sandbox import SandboxServer
from workbench.sandbox.dashboard.signin import issue_link
from workbench.testing import running_sandbox

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def dash(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SandboxServer]:
    """The module's sandbox: reconciler on demand, webhooks to loopback allowed."""
    with running_sandbox(
        db_dir=tmp_path_factory.mktemp("dashboard-browser"),
        run_reconciler_in_background=False,
        public_rate_limit_per_second=0,
        webhook_allow_private=True,
    ) as running:
        running.app.state.dashboard.failed_sign_in_delay = 0.2
        yield running


@pytest.fixture
def merchant(dash: SandboxServer) -> Merchant:
    """A merchant of this test's own (shadows the package's return page, unused here)."""
    return new_merchant(dash.base_url, "Kitapçı")


@pytest.fixture
def api(dash: SandboxServer, merchant: Merchant) -> Iterator[httpx2.Client]:
    """The merchant's server: signed API calls."""
    with signed_client(dash.base_url, merchant.api_key, merchant.secret_key) as http:
        yield http


def _fits(page: Any) -> None:
    """The page is read without sideways scrolling at the viewport's width."""
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= page.viewport_size["width"], f"{page.url} is {width} px wide"


def _sign_in(page: Any, dash: SandboxServer, merchant: Merchant) -> None:
    page.goto(f"{dash.base_url}/dashboard/sign-in")
    page.locator("#api_key").fill(merchant.api_key)
    page.locator("#secret_key").fill(merchant.secret_key)
    page.locator("[data-testid=sign-in-form] button[type=submit]").click()
    page.wait_for_url(f"{dash.base_url}/dashboard")


def test_the_banner_link_signs_in_once(page: Any, dash: SandboxServer, shot: Shots) -> None:
    with dash.sandbox.db.write() as conn:
        token = issue_link(conn)
    link = f"{dash.base_url}/dashboard/sign-in/link?token={token}"
    page.goto(link)
    assert page.url == f"{dash.base_url}/dashboard"
    assert page.get_by_test_id("merchant").inner_text().startswith("mrc_demo0001")
    _fits(page)
    shot(page, "home")
    page.get_by_test_id("sign-out").click()
    page.wait_for_url(f"{dash.base_url}/dashboard/sign-in")
    response = page.goto(link)
    assert response is not None
    assert response.status == 404
    assert "used already" in page.get_by_test_id("error").inner_text()


def test_keyboard_only_sign_in_through_the_form(
    page: Any, dash: SandboxServer, merchant: Merchant, shot: Shots
) -> None:
    page.goto(f"{dash.base_url}/dashboard/payments")
    assert "/dashboard/sign-in" in page.url
    _fits(page)
    for _ in range(20):  # Tab from the top of the page to the form's first field
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement.id") == "api_key":
            break
    else:
        pytest.fail("the API key field is not reached with Tab")
    page.keyboard.type(merchant.api_key)
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.id") == "secret_key"
    page.keyboard.type("sk_test_wrong")
    page.keyboard.press("Enter")
    page.wait_for_selector("[data-testid=error]")
    shot(page, "refused")
    page.locator("#secret_key").focus()
    page.keyboard.type(merchant.secret_key)
    page.keyboard.press("Enter")
    page.wait_for_url(f"{dash.base_url}/dashboard/payments")
    assert page.get_by_role("heading", name="Payments", level=1).is_visible()


def test_a_charge_appears_live_and_its_page_shows_the_timeline(
    page: Any, dash: SandboxServer, merchant: Merchant, api: httpx2.Client, shot: Shots
) -> None:
    _sign_in(page, dash, merchant)
    page.goto(f"{dash.base_url}/dashboard/events")
    page.wait_for_function("document.querySelector('tr.empty') !== null")
    paid = api.post("/v1/payments/card", json=charge_under(txn(), 45_600)).json()
    row = page.locator("[data-live=events] tbody tr.fresh").first
    row.wait_for()
    assert "payment.captured" in row.inner_text()
    shot(page, "live")
    page.goto(f"{dash.base_url}/dashboard/payments")
    page.get_by_role("link", name=paid["paymentId"]).click()
    assert page.get_by_test_id("state").inner_text() == "captured"
    timeline = page.get_by_test_id("timeline").inner_text()
    assert "created" in timeline
    assert "payment.captured" in timeline
    _fits(page)
    shot(page, "payment")


def test_a_failed_webhook_shows_its_attempts_and_resend_delivers_it(
    page: Any, dash: SandboxServer, merchant: Merchant, api: httpx2.Client, shot: Shots
) -> None:
    with receiving() as receiver:
        api.put("/sandbox/webhook", json={"url": receiver.url})
        api.post("/v1/payments/card", json=charge_under(txn(), 10_000))
        api.post("/sandbox/reconciler/tick", json={})
        _sign_in(page, dash, merchant)
        page.goto(f"{dash.base_url}/dashboard/events")
        page.locator("[data-live=events] tbody a").first.click()
        attempts = page.get_by_test_id("attempts")
        assert re.search(r"\b500\b", attempts.inner_text())
        assert "receiver broken" in attempts.inner_text()
        assert page.get_by_test_id("delivery-state").inner_text() == "pending"
        _fits(page)
        shot(page, "failed")
        receiver.status, receiver.body = 200, b"ok"
        page.get_by_test_id("resend").click()
        page.wait_for_selector("[data-testid=resent]")
        assert page.get_by_test_id("delivery-state").inner_text() == "delivered"
        assert re.search(r"\b200\b", page.get_by_test_id("attempts").inner_text())
        assert [attempt for _, attempt in receiver.received] == ["1", "2"]
        _fits(page)
        shot(page, "delivered")


def test_the_clock_advances_from_the_page(
    page: Any, dash: SandboxServer, merchant: Merchant, shot: Shots
) -> None:
    _sign_in(page, dash, merchant)
    page.get_by_role("link", name="Clock").click()
    before = page.get_by_test_id("business-time").get_attribute("data-iso")
    page.get_by_test_id("advance-day").click()
    page.wait_for_selector("[data-testid=moved]")
    after = page.get_by_test_id("business-time").get_attribute("data-iso")
    assert after[:10] > before[:10]
    _fits(page)
    shot(page, "clock")


@pytest.mark.parametrize("language", ["tr"])
def test_the_dashboard_speaks_turkish(
    page: Any, dash: SandboxServer, merchant: Merchant, language: str, shot: Shots
) -> None:
    page.goto(f"{dash.base_url}/dashboard/sign-in")
    assert page.get_by_role("heading", level=1).inner_text() == "Test ortamı paneline giriş"
    _sign_in(page, dash, merchant)
    nav = page.get_by_role("navigation", name="Panel")
    assert nav.get_by_role("link", name="Ödemeler").is_visible()
    page.get_by_role("link", name="English").click()
    assert page.get_by_role("navigation", name="Dashboard").get_by_role("link", name="Payments")
    _fits(page)
    shot(page, "english")
