"""The hosted pages' security headers, checked in Chromium: the pages still work, an
injected inline script does not run, and only loopback pages may frame them."""

from __future__ import annotations

from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx2
import pytest

from tests.browser.buyer import fill_card, landed
from tests.browser.merchant import SHOP
from tests.chromium import serving
from workbench import Client
from workbench.sandbox import SandboxServer

_PAGES = ("/", "/checkout/{session}", "/sandbox/acs/pay_x?correlationId=x", "/demo/merchant/return")


@pytest.mark.parametrize("path", _PAGES)
def test_every_html_page_sends_the_security_headers(
    path: str, server: SandboxServer, new_session: Callable[..., Any]
) -> None:
    url = server.base_url + path.format(session=new_session().session_id)
    response = httpx2.get(url, timeout=10)
    assert response.headers["content-type"].startswith("text/html")
    policy = response.headers["content-security-policy"]
    assert "script-src 'self'" in policy
    assert "'unsafe-inline'" not in policy
    assert "frame-ancestors 'self' http://127.0.0.1:* http://localhost:*" in policy
    assert response.headers["referrer-policy"] == "no-referrer"
    assert response.headers["x-content-type-options"] == "nosniff"


def test_an_injected_inline_script_does_not_run_and_the_page_still_pays(
    page: Any, new_session: Callable[..., Any], client: Client
) -> None:
    session = new_session()
    violations: list[str] = []
    page.on("console", lambda message: violations.append(message.text))

    def inject(route: Any) -> None:
        response = route.fetch()
        html = response.text().replace("</main>", "<script>window.injected = 1;</script></main>")
        route.fulfill(response=response, body=html)

    page.route(session.checkout_url, inject)
    page.goto(session.checkout_url)
    assert page.evaluate("window.injected === undefined")
    assert any("Content Security Policy" in text for text in violations), violations
    # The page's own script still runs (submit once) and the payment goes through.
    fill_card(page)
    page.get_by_label("Name on the card").press("Enter")
    page.wait_for_url(lambda url: "outcome=" in url, timeout=20_000)
    query = landed(page.url)
    assert query["outcome"] == "success"
    assert client.payments.retrieve(query["paymentId"]).status == "captured"


class _Embedder(BaseHTTPRequestHandler):
    """A page elsewhere that puts the checkout in an iframe."""

    target = ""

    def do_GET(self) -> None:
        body = (
            f'<iframe id="f" src="{self.target}" width="400" height="400"'
            ' onload="window.frameLoaded = true"></iframe>'
        ).encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


def test_only_a_page_on_this_machine_may_frame_the_checkout(
    chromium: Any, new_session: Callable[..., Any]
) -> None:
    _Embedder.target = new_session().checkout_url
    # SHOP resolves to this machine (the package's browser maps it), but its origin is
    # not a loopback name.
    with serving(ThreadingHTTPServer(("127.0.0.1", 0), _Embedder)) as port:
        framed = _frame(chromium, f"http://127.0.0.1:{port}/notebook")
        refused = _frame(chromium, f"http://{SHOP}:{port}/embed")
    assert framed == (1, [])
    count, console = refused
    assert count == 0
    assert any("frame-ancestors" in line for line in console), console


def _frame(browser: Any, url: str) -> tuple[int, list[str]]:
    """How many card forms show in the page's iframe, and what the console said."""
    context = browser.new_context()
    page = context.new_page()
    console: list[str] = []
    page.on("console", lambda message: console.append(message.text))
    try:
        page.goto(url)
        # The load event fires for the page or for the browser's "blocked" page.
        page.wait_for_function("window.frameLoaded === true", timeout=20_000)
        return page.frame_locator("#f").get_by_label("Card number").count(), console
    finally:
        context.close()
