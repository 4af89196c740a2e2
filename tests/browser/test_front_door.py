"""The sandbox's own pages in a real browser, with no network: ``/`` and ``/docs``.

Every request a page makes is recorded (and any that would leave loopback is aborted,
so nothing waits on a network the machine may not have); the tests then assert each
one went to 127.0.0.1. Swagger UI must actually render the operations of the
OpenAPI document, not just load a blank shell.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

import httpx2
import pytest

from tests.browser.screenshots import Shots
from workbench.config import DEFAULT_SECRET_KEY
from workbench.sandbox import SandboxServer
from workbench.testing import running_sandbox

pytestmark = pytest.mark.browser


class Requests:
    """Every request the browser context makes; anything off loopback is aborted."""

    def __init__(self, context: Any) -> None:
        self.urls: list[str] = []
        context.route("**/*", self._route)

    def _route(self, route: Any) -> None:
        url = route.request.url
        self.urls.append(url)
        if urlsplit(url).hostname == "127.0.0.1":
            route.continue_()
        else:
            route.abort()

    def hosts(self) -> set[str | None]:
        """The host of every recorded request."""
        return {urlsplit(url).hostname for url in self.urls}


@pytest.fixture
def requests(page: Any) -> Requests:
    """Records (and keeps on loopback) what ``page`` requests."""
    return Requests(page.context)


def test_front_page_says_what_this_is_and_where_to_go(
    page: Any, requests: Requests, server: SandboxServer, shot: Shots
) -> None:
    response = page.goto(server.base_url + "/")
    assert response is not None
    assert response.status == 200
    assert page.get_by_role("heading", name="Payments Workbench sandbox", level=1).is_visible()
    assert page.get_by_test_id("base-url").inner_text() == server.base_url
    assert page.get_by_test_id("api-key").inner_text() == server.config.api_key
    dashboard = page.get_by_test_id("dashboard-link").get_attribute("href")
    assert dashboard == f"{server.base_url}/dashboard"
    assert page.get_by_test_id("secret-key").inner_text() == "sk_…0001"
    assert DEFAULT_SECRET_KEY not in page.content()
    links = {
        "The guide": "http://127.0.0.1:8000/",
        "Interactive API reference": server.base_url + "/docs",
        "OpenAPI document": server.base_url + "/openapi.json",
        "Fixtures": "#fixtures",
        "Test cards": "#test-cards",
    }
    for name, href in links.items():
        assert page.get_by_role("link", name=name, exact=True).get_attribute("href") == href
    assert "cus_demo_ayse" in page.get_by_test_id("customers").inner_text()
    cards = page.get_by_test_id("test-cards").inner_text()
    assert "4242 4242 4242 4242" in cards
    assert "tok_test_3ds_challenge" in cards
    # The same look as the hosted pages: their stylesheet and banner.
    assert page.locator("link[rel=stylesheet]").get_attribute("href") == (
        server.base_url + "/checkout/static/checkout.css"
    )
    assert page.get_by_role("note").inner_text().startswith("Sandbox: no real money moves")
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    shot(page, "front-page")
    # The links the page gives work from here.
    page.get_by_role("link", name="OpenAPI document", exact=True).click()
    page.wait_for_url("**/openapi.json")
    assert "/v1/payments" in page.content()
    assert requests.urls, "no request was recorded"
    assert requests.hosts() == {"127.0.0.1"}, requests.urls


def test_swagger_ui_renders_the_operations_offline(
    page: Any, requests: Requests, server: SandboxServer, shot: Shots
) -> None:
    document = httpx2.get(server.base_url + "/openapi.json").json()
    operations = sum(len(item) for item in document["paths"].values())
    # Swagger UI draws each webhook as an operation block too.
    operations += sum(len(item) for item in document.get("webhooks", {}).values())
    page.set_viewport_size({"width": 1280, "height": 900})
    page.goto(server.base_url + "/docs")
    page.locator(".opblock").first.wait_for()
    assert page.locator(".opblock").count() == operations
    capture = page.locator(".opblock-post", has_text="/v1/payments/{id}/capture")
    assert capture.count() == 1
    capture.locator(".opblock-summary").click()
    page.locator(".opblock-body").first.wait_for()
    assert page.get_by_text("Unable to render this definition").count() == 0
    shot(page, "swagger-ui")
    assert requests.hosts() == {"127.0.0.1"}, requests.urls
    assert any("/docs/static/swagger-ui-bundle.js" in url for url in requests.urls)


def test_no_redoc_page_that_would_load_from_a_cdn(server: SandboxServer) -> None:
    # ReDoc's standalone bundle fetches its logo from its CDN: not served here.
    assert httpx2.get(server.base_url + "/redoc").status_code == 404


@pytest.fixture(scope="module")
def own_keys(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SandboxServer]:
    """A sandbox whose demo merchant runs on keys set by the operator."""
    with running_sandbox(
        db_dir=tmp_path_factory.mktemp("front-door"),
        api_key="pk_test_team_key_7f3a",
        secret_key="sk_test_team_secret_do_not_show_9c1e",
        run_reconciler_in_background=False,
    ) as running:
        yield running


def test_front_page_masks_keys_set_by_the_operator(own_keys: SandboxServer) -> None:
    page = httpx2.get(own_keys.base_url + "/")
    assert page.status_code == 200
    assert page.headers["content-type"].startswith("text/html")
    assert "sk_test_team_secret_do_not_show_9c1e" not in page.text
    assert "team_secret" not in page.text
    assert "sk_…9c1e" in page.text
    assert "pk_test_team_key_7f3a" not in page.text
    assert "pk_test_…7f3a" in page.text


def test_front_page_refuses_a_host_it_does_not_serve(own_keys: SandboxServer) -> None:
    hostile = '127.0.0.1"><script>alert(1)</script>'
    page = httpx2.get(own_keys.base_url + "/", headers={"Host": hostile})
    assert page.status_code == 400
    assert page.json()["code"] == "SVC-GW-4000"
    assert "<script>" not in page.text
    # A Host it serves, on another port, changes nothing on the page: the bound address shows.
    page = httpx2.get(own_keys.base_url + "/", headers={"Host": "localhost:1"})
    assert page.status_code == 200
    assert own_keys.base_url in page.text
    assert "localhost:1" not in page.text
