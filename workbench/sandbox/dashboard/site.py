"""The dashboard's frame: its pages' registration, who is signed in, forms, rendering.

A page module declares a `Page` named ``PAGE``: its router (made by
`routes.page_router`, so every route is lazy like the app's others) and its entries in
the nav (`NavItem`, its label marked with `checkout.messages.N_`). The composition root
mounts the list (`mount`, in ``workbench.sandbox.app``) in the order the nav shows them;
a new page (the request log's, say) is one more module under ``routes/`` and one more
line in that list:

```python
router = page_router()
PAGE = Page(router, (NavItem("requests", N_("Requests"), f"{PREFIX}/requests"),))


@router.get(f"{PREFIX}/requests")
def requests(request: Request, viewer: ViewerDep, sandbox: Services) -> Response:
    with sandbox.db.read() as conn:
        rows = ...  # the merchant's own rows only: viewer.merchant_id
    return render(request, "requests.html", page_language(request), viewer=viewer,
                  section="requests", rows=rows)
```

Its template extends ``base.html`` (``{% block main %}``); a table it marks
``data-live="requests"`` gets the rows of a live source of that kind
(`workbench.sandbox.dashboard.live`).

A route of a page takes `ViewerDep` (a merchant's session: nobody else's data is ever
read) or `SignedInDep` (any session, an admin's before picking a merchant); without a
session both send the browser to the sign-in page (`SignInRequired`). A form handler
reads its fields with `read_form`, which refuses a cross-site post and a wrong CSRF
token with 403 before the handler sees anything. `render` draws a template of
``dashboard/templates`` in the viewer's language, with the hosted pages' headers.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from functools import cache, partial
from importlib import resources
from typing import TYPE_CHECKING, Annotated, Any, Protocol
from urllib.parse import quote, urlsplit

from fastapi import APIRouter, Depends, FastAPI, Request
from starlette.responses import HTMLResponse, RedirectResponse, Response

from workbench.sandbox.admin import AdminAccess
from workbench.sandbox.checkout import languages
from workbench.sandbox.checkout.forms import FormError, parse_body
from workbench.sandbox.checkout.rendering import (
    PAGE_HEADERS,
    PageLanguage,
    page_environment,
    page_language,
    with_lang,
)
from workbench.sandbox.config import SandboxConfig
from workbench.sandbox.dashboard.live import LiveHub
from workbench.sandbox.dashboard.sessions import COOKIE, SessionCodec, Viewer
from workbench.sandbox.keys import look_up
from workbench.sandbox.reconciler import Reconciler
from workbench.sandbox.sealing import Sealer
from workbench.sandbox.storage import Database

if TYPE_CHECKING:
    import jinja2

    from workbench.sandbox.events import WebhookWork

__all__ = [
    "HEADERS",
    "PREFIX",
    "Dashboard",
    "DashboardServices",
    "DashboardSite",
    "NavItem",
    "Page",
    "SignInRequired",
    "SignedInDep",
    "ViewerDep",
    "mount",
    "read_form",
    "render",
    "services_of",
    "set_session",
]

#: Where the dashboard lives.
PREFIX = "/dashboard"

_CSP = PAGE_HEADERS["Content-Security-Policy"]
#: The hosted pages' headers (`checkout.rendering.PAGE_HEADERS`), but the live list's
#: stream may be read (``connect-src 'self'``) and no page may frame the dashboard: its
#: buttons act for the merchant.
HEADERS = {
    **PAGE_HEADERS,
    "Content-Security-Policy": _CSP[: _CSP.index("frame-ancestors")]
    + "frame-ancestors 'none'; connect-src 'self'; form-action 'self'",
}


class AddressLimiter(Protocol):
    """What sign-in uses of the sandbox's per-address limiter."""

    rate: float
    #: Its buckets are database rows: call `check` off the event loop.
    shared: bool

    def check(self, merchant_id: str, api_key: str) -> float | None:
        """Take a token for the address ``api_key``: ``None``, or the seconds to wait."""
        ...


class DashboardServices(Protocol):
    """What the dashboard's pages use of the running sandbox."""

    @property
    def config(self) -> SandboxConfig:
        """How the sandbox runs."""
        ...

    @property
    def db(self) -> Database:
        """The sandbox database."""
        ...

    @property
    def sealer(self) -> Sealer:
        """Opens the merchants' sealed secrets."""
        ...

    @property
    def admin(self) -> AdminAccess:
        """Whether the admin token is needed, and checks it."""
        ...

    @property
    def address_limiter(self) -> AddressLimiter:
        """The per-client-address limiter (sign-in attempts are counted on it)."""
        ...

    @property
    def reconciler(self) -> Reconciler:
        """The background work's runner (the clock)."""
        ...

    @property
    def webhooks(self) -> WebhookWork:
        """Webhook delivery (the resend button)."""
        ...


async def services_of(request: Request) -> DashboardServices:
    """The running sandbox (a FastAPI dependency)."""
    sandbox: DashboardServices = request.app.state.sandbox
    return sandbox


@dataclass(frozen=True, slots=True)
class NavItem:
    """An entry of the nav.

    Attributes:
        key: names the section (``payments``); the page drawing it passes it as ``section``.
        label: an English gettext message (`checkout.messages.N_`), translated when drawn.
        path: where it links to.
    """

    key: str
    label: str
    path: str


@dataclass(frozen=True, slots=True)
class Page:
    """A page module's registration: its router and its nav entries."""

    router: APIRouter
    nav: tuple[NavItem, ...] = ()


@dataclass(slots=True)
class Dashboard:
    """What the pages share, built by `mount`.

    Attributes:
        nav: the mounted pages' entries, in order.
        sessions: signs and reads the session cookies.
        live: the live list's publisher (`workbench.sandbox.dashboard.live`).
        failed_sign_in_delay: seconds a refused sign-in waits before it answers.
    """

    nav: tuple[NavItem, ...]
    sessions: SessionCodec
    live: LiveHub
    failed_sign_in_delay: float = 1.0
    extra: dict[str, Any] = field(default_factory=dict)


async def dashboard_of(request: Request) -> Dashboard:
    """The app's `Dashboard` (a FastAPI dependency)."""
    found: Dashboard = request.app.state.dashboard
    return found


DashboardSite = Annotated[Dashboard, Depends(dashboard_of)]
Services = Annotated[DashboardServices, Depends(services_of)]


class SignInRequired(Exception):
    """No session (none, altered, expired): the browser goes to the sign-in page."""

    def __init__(self, next_path: str = "") -> None:
        super().__init__("sign in to the dashboard")
        self.next_path = next_path


class MerchantRequired(Exception):
    """An admin's session that has not picked a merchant yet: to the picker."""


async def signed_in(request: Request) -> Viewer:
    """The request's session, whoever it is for (a FastAPI dependency)."""
    site: Dashboard = request.app.state.dashboard
    viewer = site.sessions.loads(request.cookies.get(COOKIE))
    if viewer is None:
        raise SignInRequired(request.url.path if request.method == "GET" else "")
    return viewer


async def viewer_of(request: Request) -> Viewer:
    """The request's session, showing a merchant (a FastAPI dependency).

    A merchant's own session lasts only while the key it signed in with does: a key
    revoked, or its merchant deleted, since sends the browser back to the sign-in page.
    """
    viewer = await signed_in(request)
    if not viewer.merchant_id:
        raise MerchantRequired
    if not viewer.admin:
        db: Database = request.app.state.sandbox.db
        record = await db.in_thread(partial(look_up, db, viewer.api_key))
        if record is None or record.revoked or record.merchant_id != viewer.merchant_id:
            raise SignInRequired(request.url.path if request.method == "GET" else "")
    return viewer


SignedInDep = Annotated[Viewer, Depends(signed_in)]
ViewerDep = Annotated[Viewer, Depends(viewer_of)]


def _sign_in_redirect(request: Request, exc: Exception) -> Response:
    target = f"{PREFIX}/sign-in"
    if isinstance(exc, SignInRequired) and exc.next_path.startswith(PREFIX + "/"):
        target += "?next=" + quote(exc.next_path, safe="/")
    return RedirectResponse(target, status_code=303, headers={"Cache-Control": "no-store"})


def _pick_redirect(request: Request, exc: Exception) -> Response:
    return RedirectResponse(f"{PREFIX}/merchants", status_code=303)


def mount(app: FastAPI, pages: Sequence[Page], *, sealer: Sealer, live: LiveHub) -> Dashboard:
    """Add the pages' routes to ``app`` and keep what they share in ``app.state.dashboard``.

    Args:
        app: the sandbox app.
        pages: the page modules' `Page`, in nav order.
        sealer: the sandbox's (derives the session cookies' key).
        live: the live list's publisher.
    """
    from workbench.sandbox.lazy_routes import add_routes

    site = Dashboard(
        nav=tuple(item for page in pages for item in page.nav),
        sessions=SessionCodec(sealer.derive("dashboard sessions")),
        live=live,
    )
    app.state.dashboard = site
    add_routes(app, [page.router for page in pages])
    app.add_exception_handler(SignInRequired, _sign_in_redirect)
    app.add_exception_handler(MerchantRequired, _pick_redirect)
    return site


def set_session(response: Response, request: Request, site: Dashboard, viewer: Viewer) -> None:
    """Put ``viewer``'s session cookie on ``response``."""
    response.set_cookie(
        COOKIE,
        site.sessions.dumps(viewer),
        max_age=site.sessions.max_age,
        path=PREFIX,
        httponly=True,
        samesite="strict",
        secure=request.url.scheme == "https",
    )


class FormRefused(Exception):
    """A form post from another site, or without the right token (403)."""


def same_origin(request: Request) -> bool:
    """Whether a post came from a page of this sandbox, by what the browser says.

    ``Sec-Fetch-Site`` when sent (every current browser), else ``Origin``'s host
    compared with ``Host``; a request with neither (a script, curl) still needs the
    form's token, which only a page of the session holds.
    """
    fetch_site = request.headers.get("sec-fetch-site")
    if fetch_site is not None:
        return fetch_site in ("same-origin", "none")
    origin = request.headers.get("origin")
    if origin is None:
        return True
    host = request.headers.get("host", "")
    return origin != "null" and urlsplit(origin).netloc == host


async def read_form(request: Request, token: str | None) -> dict[str, str]:
    """A form post's fields, once it is known to come from the session's own page.

    Args:
        request: the post.
        token: the CSRF token the form must carry (``None``: there is none, refuse).

    Raises:
        FormRefused: another site's post, an unreadable body, a missing or wrong token.
    """
    import hmac

    if not same_origin(request):
        raise FormRefused
    try:
        fields = parse_body(await request.body())
    except FormError:
        raise FormRefused from None
    sent = fields.get("csrf", "")
    if token is None or not sent or not hmac.compare_digest(sent.encode(), token.encode()):
        raise FormRefused
    return fields


def refused_page(request: Request) -> Response:
    """403: a form post the dashboard does not accept."""
    lang = page_language(request)
    return render(request, "refused.html", lang, 403, viewer=None, section="")


@cache
def _environment(lang: str) -> jinja2.Environment:
    env = page_environment("workbench.sandbox.dashboard", lang)
    env.filters["moment"] = partial(_moment, code=lang)
    return env


def _moment(when: datetime | str | None, code: str) -> str:
    if when is None or when == "":
        return "-"
    if isinstance(when, str):
        when = datetime.fromisoformat(when.replace("Z", "+00:00"))
    return languages.moment(when, code) + f" ({when.strftime('%H:%M:%S')} UTC)"


def render(
    request: Request,
    template: str,
    lang: PageLanguage,
    status: int = 200,
    *,
    viewer: Viewer | None,
    section: str,
    switch_url: str | None = None,
    **context: Any,
) -> HTMLResponse:
    """A dashboard page: the template in ``lang``, the nav, the hosted pages' headers.

    Args:
        request: the request drawn for (its address is the language switcher's).
        template: a template of ``dashboard/templates``.
        lang: the page's language.
        status: the HTTP status.
        viewer: the session (``None``: a page drawn before sign-in, no nav).
        section: the nav entry to mark as current.
        switch_url: where the language switcher links (default: this page; a page
            that found nothing links home, echoing nothing of the address).
        **context: the template's variables.
    """
    site: Dashboard = request.app.state.dashboard
    if switch_url is None:
        query = f"?{request.url.query}" if request.url.query and request.method == "GET" else ""
        switch_url = request.url.path + query
    switcher = [
        (language, with_lang(switch_url, code)) for code, language in languages.LANGUAGES.items()
    ]
    html = (
        _environment(lang.code)
        .get_template(template)
        .render(
            lang=lang.code,
            switcher=switcher,
            nav=site.nav if viewer is not None and viewer.merchant_id else (),
            viewer=viewer,
            section=section,
            prefix=PREFIX,
            **context,
        )
    )
    response = HTMLResponse(
        html, status_code=status, headers={**HEADERS, "Content-Language": lang.code}
    )
    if lang.chosen:
        response.set_cookie(languages.COOKIE, lang.code, path="/", httponly=True, samesite="lax")
    return response


@cache
def static_file(name: str) -> bytes:
    """A file of ``dashboard/static``."""
    return resources.files("workbench.sandbox.dashboard").joinpath(f"static/{name}").read_bytes()


async def refuse_slowly(site: Dashboard) -> None:
    """Wait before a refused sign-in answers: guesses come slowly."""
    await asyncio.sleep(site.failed_sign_in_delay)


def nav_keys(pages: Iterable[Page]) -> list[str]:
    """The nav's keys, in order (for tests and the guide)."""
    return [item.key for page in pages for item in page.nav]
