"""The merchant's objects: payments, sessions, refunds, subscriptions.

| method | path | what |
|---|---|---|
| GET | ``/dashboard/{kind}?q=`` | the newest 100; ``q``: by id or transactionId (or its start) |
| GET | ``/dashboard/{kind}/{id}`` | the object: fields, derived timeline, events, related objects |

Another merchant's object answers 404 exactly as a missing one (`views.find_object`).
"""

from __future__ import annotations

from typing import Annotated

from fastapi import Path, Query, Request
from starlette.responses import Response

from workbench.sandbox.checkout.messages import N_
from workbench.sandbox.checkout.rendering import page_language
from workbench.sandbox.dashboard.routes import page_router
from workbench.sandbox.dashboard.site import (
    PREFIX,
    NavItem,
    Page,
    Services,
    ViewerDep,
    render,
)
from workbench.sandbox.dashboard.views import KINDS, find_object, list_objects

__all__ = ["PAGE", "router"]

router = page_router()

#: Each kind's nav label and its one object's name.
TITLES = {
    "payments": (N_("Payments"), N_("Payment")),
    "sessions": (N_("Sessions"), N_("Checkout session")),
    "refunds": (N_("Refunds"), N_("Refund")),
    "subscriptions": (N_("Subscriptions"), N_("Subscription")),
}
PAGE = Page(router, tuple(NavItem(k, TITLES[k][0], f"{PREFIX}/{k}") for k in KINDS))

ObjectId = Annotated[str, Path(max_length=64)]


def _list_route(kind: str) -> None:
    def object_list(
        request: Request,
        viewer: ViewerDep,
        sandbox: Services,
        q: Annotated[str, Query(max_length=64)] = "",
    ) -> Response:
        """A list of the merchant's objects of one kind."""
        with sandbox.db.read() as conn:
            rows = list_objects(conn, kind, viewer.merchant_id, q)
        return render(
            request,
            "objects.html",
            page_language(request),
            viewer=viewer,
            section=kind,
            kind=kind,
            title=TITLES[kind][0],
            rows=rows,
            q=q,
        )

    def object_page(
        request: Request, object_id: ObjectId, viewer: ViewerDep, sandbox: Services
    ) -> Response:
        """One object of the merchant (404 for another merchant's, as for a missing one)."""
        with sandbox.db.read() as conn:
            found = find_object(conn, kind, viewer.merchant_id, object_id)
        lang = page_language(request)
        if found is None:
            return render(
                request,
                "not_found.html",
                lang,
                404,
                switch_url=PREFIX,
                viewer=viewer,
                section=kind,
                kind=kind,
            )
        return render(
            request,
            "object.html",
            lang,
            viewer=viewer,
            section=kind,
            kind=kind,
            title=TITLES[kind][1],
            obj=found,
        )

    router.add_api_route(f"{PREFIX}/{kind}", object_list, methods=["GET"], name=f"{kind}_list")
    router.add_api_route(
        f"{PREFIX}/{kind}/{{object_id}}", object_page, methods=["GET"], name=f"{kind}_page"
    )


for _kind in KINDS:
    _list_route(_kind)
