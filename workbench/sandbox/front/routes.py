"""``GET /``: what this is, its base URL and demo keys, links, fixtures and test cards.

The secret key is always shown masked (``sk_…0001``), whatever it is: the page is
served to anyone who can reach the port. The public key is shown as the startup banner
shows it (in full when it is the built-in demo key).
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING, Any

from fastapi import APIRouter, Request
from starlette.responses import HTMLResponse

from workbench.config import mask_key, mask_secret
from workbench.sandbox.cards import CHALLENGE_CODE, TEST_CARDS
from workbench.sandbox.checkout.rendering import PAGE_HEADERS
from workbench.sandbox.control.service import fixtures_view
from workbench.sandbox.fixtures import DEMO_MERCHANT_ID
from workbench.sandbox.lazy_routes import LazyAPIRoute
from workbench.sandbox.routing import RouteServices, SandboxDep, base_url

if TYPE_CHECKING:
    import jinja2

__all__ = ["GUIDE_URL", "router"]

#: Where ``make docs-serve`` serves the guide.
GUIDE_URL = "http://127.0.0.1:8000/"

router = APIRouter(route_class=LazyAPIRoute, redirect_slashes=False, include_in_schema=False)


@cache
def _environment() -> jinja2.Environment:
    import jinja2  # with the first page: a sandbox that only answers the API never needs it

    loader = jinja2.ChoiceLoader(
        [
            jinja2.PackageLoader("workbench.sandbox.front", "templates"),
            jinja2.PackageLoader("workbench.sandbox.checkout", "templates"),
        ]
    )
    env = jinja2.Environment(
        loader=loader,
        autoescape=jinja2.select_autoescape(default=True, default_for_string=True),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        extensions=["jinja2.ext.i18n"],
    )
    # The developer's page, in English: the hosted pages' base.html, untranslated.
    env.install_null_translations(newstyle=True)  # type: ignore[attr-defined]
    return env


def _grouped(number: str) -> str:
    return " ".join(number[i : i + 4] for i in range(0, len(number), 4))


def _fixtures(sandbox: RouteServices) -> dict[str, Any]:
    with sandbox.db.read() as conn:
        view = fixtures_view(conn, DEMO_MERCHANT_ID, sandbox.sealer)
    # The webhook secret stays behind the signed GET /sandbox/fixtures.
    return {
        "merchant": view["merchant"],
        "stores": [{"id": s["id"], "name": s["name"]} for s in view["stores"]],
        "customers": view["customers"],
    }


@router.get("/")
def front_page(request: Request, sandbox: SandboxDep) -> HTMLResponse:
    """The front page of the sandbox (HTML, no signature)."""
    config = sandbox.config
    base = base_url(request, sandbox)
    html = (
        _environment()
        .get_template("front.html")
        .render(
            lang="en",
            switcher=[],
            static_base=base,
            base_url=base,
            api_key=config.api_key if config.uses_default_keys else mask_key(config.api_key),
            secret_key=mask_secret(config.secret_key),
            default_keys=config.uses_default_keys,
            guide_url=GUIDE_URL,
            fixtures=_fixtures(sandbox),
            cards=[(card, _grouped(card.number)) for card in TEST_CARDS],
            challenge_code=CHALLENGE_CODE,
        )
    )
    return HTMLResponse(html, headers=PAGE_HEADERS)
