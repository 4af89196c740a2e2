"""The store's webhook settings: its URL, and its secret shown when asked.

| method | path | what |
|---|---|---|
| GET | ``/dashboard/settings`` | the store's webhook URL (the secret is not in the page) |
| POST | ``/dashboard/settings/reveal`` | the same page with the webhook secret shown |
"""

from __future__ import annotations

import sqlalchemy as sa
from fastapi import Request
from starlette.responses import Response

from workbench.sandbox import tables
from workbench.sandbox.checkout.messages import N_
from workbench.sandbox.checkout.rendering import page_language
from workbench.sandbox.dashboard.routes import page_router
from workbench.sandbox.dashboard.sessions import Viewer
from workbench.sandbox.dashboard.site import (
    PREFIX,
    FormRefused,
    NavItem,
    Page,
    Services,
    ViewerDep,
    read_form,
    refused_page,
    render,
)
from workbench.sandbox.merchant_secrets import plain_webhook_secret

__all__ = ["PAGE", "router"]

router = page_router()
PAGE = Page(router, (NavItem("settings", N_("Webhook settings"), f"{PREFIX}/settings"),))


def _settings(request: Request, viewer: Viewer, sandbox: Services, *, reveal: bool) -> Response:
    stores = tables.stores
    with sandbox.db.read() as conn:
        row = conn.execute(
            sa.select(
                stores.c.id, stores.c.name, stores.c.webhook_url, stores.c.webhook_secret
            ).where(stores.c.id == viewer.store_id, stores.c.merchant_id == viewer.merchant_id)
        ).first()
    secret = None
    if reveal and row is not None:
        secret = plain_webhook_secret(sandbox.sealer, str(row.id), str(row.webhook_secret))
    return render(
        request,
        "settings.html",
        page_language(request),
        viewer=viewer,
        section="settings",
        store=row,
        secret=secret,
    )


@router.get(f"{PREFIX}/settings")
def settings(request: Request, viewer: ViewerDep, sandbox: Services) -> Response:
    """The store's webhook URL; its secret behind a button."""
    return _settings(request, viewer, sandbox, reveal=False)


@router.post(f"{PREFIX}/settings/reveal")
async def reveal(request: Request, viewer: ViewerDep, sandbox: Services) -> Response:
    """The same page, with the webhook secret shown (asked for, never by default)."""
    try:
        await read_form(request, viewer.csrf)
    except FormRefused:
        return refused_page(request)
    return _settings(request, viewer, sandbox, reveal=True)
