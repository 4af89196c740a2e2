"""The dashboard's frame: sign-in, sign-out, the admin's merchant picker, home, assets.

| method | path | what |
|---|---|---|
| GET, POST | ``/dashboard/sign-in`` | the form: key pair (on a team host: admin token) |
| GET | ``/dashboard/sign-in/link?token=`` | the start banner's one-time link: the demo merchant |
| POST | ``/dashboard/sign-out`` | ends the session |
| GET, POST | ``/dashboard/merchants`` | the admin's merchant picker |
| GET | ``/dashboard`` | home: the merchant, its business time, its latest events (live) |
| GET | ``/dashboard/live`` | the live lists' server-sent events (`dashboard.live`) |
| GET | ``/dashboard/static/{name}`` | the stylesheet and the script |

A refused sign-in answers after `Dashboard.failed_sign_in_delay`, and every sign-in
post takes a token of the sandbox's per-address limiter first (429 past it).
"""

from __future__ import annotations

from typing import Annotated

import sqlalchemy as sa
from fastapi import Path, Query, Request
from starlette.responses import RedirectResponse, Response, StreamingResponse

from workbench.sandbox import tables
from workbench.sandbox.checkout.messages import N_
from workbench.sandbox.checkout.rendering import page_language
from workbench.sandbox.clock import business_now, iso
from workbench.sandbox.dashboard import signin
from workbench.sandbox.dashboard.routes import page_router
from workbench.sandbox.dashboard.sessions import COOKIE, PRE_COOKIE, Viewer, new_token
from workbench.sandbox.dashboard.site import (
    HEADERS,
    PREFIX,
    DashboardSite,
    FormRefused,
    Page,
    Services,
    SignedInDep,
    ViewerDep,
    read_form,
    refuse_slowly,
    refused_page,
    render,
    set_session,
    static_file,
)
from workbench.sandbox.dashboard.views import recent_events
from workbench.sandbox.errors import ServiceError
from workbench.sandbox.fixtures import DEMO_MERCHANT_ID

__all__ = ["PAGE", "router"]

router = page_router()
PAGE = Page(router)

_STATIC = {"dashboard.css": "text/css", "dashboard.js": "text/javascript"}


def _safe_next(target: str | None) -> str:
    """Where to go after sign-in: a dashboard path only (never another site)."""
    if target and target.startswith(PREFIX + "/") and "//" not in target and "\\" not in target:
        return target
    return PREFIX


def _sign_in_page(
    request: Request,
    site: DashboardSite,
    sandbox: Services,
    status: int = 200,
    error: str | None = None,
    api_key: str = "",
    next_path: str | None = None,
) -> Response:
    token = new_token()
    response = render(
        request,
        "sign_in.html",
        page_language(request),
        status,
        viewer=None,
        section="",
        csrf=token,
        error=error,
        api_key=api_key,
        team_host=sandbox.admin.required,
        next=_safe_next(next_path or request.query_params.get("next")),
    )
    response.set_cookie(
        PRE_COOKIE,
        site.sessions.form_cookie(token),
        max_age=3600,
        path=PREFIX,
        httponly=True,
        samesite="strict",
        secure=request.url.scheme == "https",
    )
    return response


@router.get(f"{PREFIX}/sign-in")
def sign_in_form(request: Request, site: DashboardSite, sandbox: Services) -> Response:
    """The sign-in form."""
    return _sign_in_page(request, site, sandbox)


async def _limited(request: Request, sandbox: Services) -> bool:
    """Take a sign-in token from the client address's bucket; ``False`` past the limit."""
    limiter = sandbox.address_limiter
    client = request.client
    address = client.host if client else "unknown"
    if limiter.rate <= 0:
        return True
    if limiter.shared:
        wait = await sandbox.db.in_thread(lambda: limiter.check("dashboard", address))
    else:
        wait = limiter.check("dashboard", address)
    return wait is None


async def _signed_in_as(
    request: Request, site: DashboardSite, viewer: Viewer, target: str
) -> Response:
    response = RedirectResponse(target, status_code=303, headers={"Cache-Control": "no-store"})
    set_session(response, request, site, viewer)
    response.delete_cookie(PRE_COOKIE, path=PREFIX)
    return response


@router.post(f"{PREFIX}/sign-in")
async def sign_in(request: Request, site: DashboardSite, sandbox: Services) -> Response:
    """Sign in with a key pair, or the admin token on a team host."""
    try:
        fields = await read_form(request, site.sessions.form_token(request.cookies.get(PRE_COOKIE)))
    except FormRefused:
        return refused_page(request)
    if not await _limited(request, sandbox):
        await refuse_slowly(site)
        return _sign_in_page(
            request,
            site,
            sandbox,
            429,
            N_("Too many attempts from this address. Wait a minute."),
            next_path=fields.get("next"),
        )
    target = _safe_next(fields.get("next"))
    admin_token = fields.get("admin_token", "")
    if admin_token:
        if sandbox.admin.required and sandbox.admin.allows(f"Bearer {admin_token}"):
            viewer = Viewer("", "", "", admin=True)
            return await _signed_in_as(request, site, viewer, f"{PREFIX}/merchants")
        await refuse_slowly(site)
        return _sign_in_page(
            request, site, sandbox, 401, N_("That admin token does not open."), next_path=target
        )
    api_key = fields.get("api_key", "").strip()
    secret = fields.get("secret_key", "").strip()
    found = await sandbox.db.in_thread(
        lambda: signin.by_secret_key(sandbox.db, sandbox.sealer, api_key, secret)
    )
    if found is None:
        await refuse_slowly(site)
        return _sign_in_page(
            request,
            site,
            sandbox,
            401,
            N_("No merchant has that API key and secret key."),
            api_key=api_key[:128],
            next_path=target,
        )
    return await _signed_in_as(request, site, found, target)


@router.get(f"{PREFIX}/sign-in/link")
async def sign_in_link(
    request: Request,
    site: DashboardSite,
    sandbox: Services,
    token: Annotated[str, Query(max_length=128)] = "",
) -> Response:
    """The start banner's one-time link: the demo merchant, once."""
    if sandbox.admin.required:  # printed on a loopback sandbox only
        return _sign_in_page(request, site, sandbox, 404, N_("This sign-in link is not valid."))

    def redeem(conn: sa.Connection) -> Viewer | None:
        if not signin.redeem_link(conn, token):
            return None
        return signin.viewer_for_merchant(conn, DEMO_MERCHANT_ID, admin=False)

    viewer = await sandbox.db.atransact(redeem)
    if viewer is None:
        await refuse_slowly(site)
        return _sign_in_page(
            request, site, sandbox, 404, N_("This sign-in link was used already or is not valid.")
        )
    return await _signed_in_as(request, site, viewer, PREFIX)


@router.post(f"{PREFIX}/sign-out")
async def sign_out(request: Request, viewer: SignedInDep) -> Response:
    """End the session."""
    try:
        await read_form(request, viewer.csrf)
    except FormRefused:
        return refused_page(request)
    response = RedirectResponse(f"{PREFIX}/sign-in", status_code=303)
    response.delete_cookie(COOKIE, path=PREFIX)
    return response


@router.get(f"{PREFIX}/merchants")
def merchant_picker(request: Request, viewer: SignedInDep, sandbox: Services) -> Response:
    """The admin's list of merchants (a merchant's own session: its own only)."""
    with sandbox.db.read() as conn:
        merchants = (
            signin.merchants_to_pick(conn)
            if viewer.admin
            else [(m, n) for m, n in signin.merchants_to_pick(conn) if m == viewer.merchant_id]
        )
    return render(
        request,
        "merchants.html",
        page_language(request),
        viewer=viewer,
        section="merchants",
        merchants=merchants,
    )


@router.post(f"{PREFIX}/merchants")
async def pick_merchant(
    request: Request, viewer: SignedInDep, site: DashboardSite, sandbox: Services
) -> Response:
    """The admin shows another merchant."""
    try:
        fields = await read_form(request, viewer.csrf)
    except FormRefused:
        return refused_page(request)
    if not viewer.admin:
        return refused_page(request)
    merchant_id = fields.get("merchant_id", "")[:64]
    found = await sandbox.db.aread(
        lambda conn: signin.viewer_for_merchant(conn, merchant_id, admin=True)
    )
    if found is None:
        return RedirectResponse(f"{PREFIX}/merchants", status_code=303)
    chosen = viewer.for_merchant(found.merchant_id, found.store_id, found.api_key)
    return await _signed_in_as(request, site, chosen, PREFIX)


def _merchant_name(conn: sa.Connection, merchant_id: str) -> str:
    m = tables.merchants
    return str(conn.execute(sa.select(m.c.name).where(m.c.id == merchant_id)).scalar() or "")


@router.get(PREFIX)
def home(request: Request, viewer: ViewerDep, sandbox: Services) -> Response:
    """The merchant, its business time, its latest events."""
    with sandbox.db.read() as conn:
        name = _merchant_name(conn, viewer.merchant_id)
        now = business_now(conn, viewer.merchant_id)
        events = recent_events(conn, viewer.merchant_id, 20)
    return render(
        request,
        "home.html",
        page_language(request),
        viewer=viewer,
        section="home",
        merchant_name=name,
        business_time=iso(now),
        events=events,
    )


@router.get(f"{PREFIX}/live")
async def live(
    request: Request, viewer: ViewerDep, site: DashboardSite, sandbox: Services
) -> Response:
    """The merchant's new rows as server-sent events."""
    stream = site.live.stream(
        sandbox.db,
        viewer.merchant_id,
        request.is_disconnected,
        request.headers.get("last-event-id"),
    )
    headers = {**HEADERS, "Cache-Control": "no-store", "X-Accel-Buffering": "no"}
    return StreamingResponse(stream, media_type="text/event-stream", headers=headers)


@router.get(f"{PREFIX}/static/{{name}}")
def static(name: Annotated[str, Path(max_length=40)]) -> Response:
    """The stylesheet and the script (nothing else)."""
    media = _STATIC.get(name)
    if media is None:
        raise ServiceError("SVC-GW-4004", "no such file")
    return Response(
        static_file(name), media_type=media, headers={"Cache-Control": "no-cache", **_NOSNIFF}
    )


_NOSNIFF = {"X-Content-Type-Options": "nosniff"}
