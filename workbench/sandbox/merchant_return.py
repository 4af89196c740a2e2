"""A demo "merchant return" page: where the hosted checkout's ``returnUrl`` can land locally.

A real ``returnUrl`` is a page of the merchant's own site. The notebooks and the
``make run`` demo have no merchant site, so the sandbox serves one at
``GET /demo/merchant/return``: it shows the query the hosted page added
(``outcome``, ``paymentId``, ``sessionId``, ``errorCode``) and reminds that the
payment is decided from ``GET /v1/payments/{id}`` or the webhook, not from this
redirect. It needs no signature (a browser lands on it) and answers HTML; a
value that is not of the expected form is shown as not valid, never echoed. It speaks
the buyer's language like the hosted pages (the cookie the checkout's switcher set, else
``Accept-Language``) and says why a failed payment failed, from its ``errorCode``.
"""

from __future__ import annotations

import re
from urllib.parse import urlencode

from fastapi import APIRouter, Request
from starlette.responses import HTMLResponse

from workbench.sandbox.checkout.messages import DECLINES, N_
from workbench.sandbox.checkout.rendering import page_language, render, translate
from workbench.sandbox.lazy_routes import LazyAPIRoute

__all__ = ["PUBLIC_ROUTES", "RETURN_PATH", "router"]

#: The page's path; a session's ``returnUrl`` is ``{sandbox base URL}`` + this.
RETURN_PATH = "/demo/merchant/return"
#: The routes of this module that take no signature (for the auth middleware).
PUBLIC_ROUTES: tuple[tuple[str, str], ...] = (("GET", rf"^{re.escape(RETURN_PATH)}$"),)

router = APIRouter(route_class=LazyAPIRoute, tags=["demo"], include_in_schema=False)

#: What each query field may hold; anything else is reported as not valid.
_FIELDS: tuple[tuple[str, str, str, re.Pattern[str]], ...] = (
    ("outcome", N_("Outcome"), "outcome", re.compile(r"^(success|failed)$")),
    ("paymentId", N_("Payment id"), "payment-id", re.compile(r"^pay_[0-9A-Za-z]{1,64}$")),
    ("sessionId", N_("Session id"), "session-id", re.compile(r"^[0-9A-Fa-f-]{36}$")),
    ("errorCode", N_("Error code"), "error-code", re.compile(r"^SVC-[A-Z]{2,4}-\d{4}$")),
)
_HEADINGS = {
    "success": N_("Thank you: the checkout says the payment went through"),
    "failed": N_("The payment did not go through"),
}


def _shown(value: str | None, pattern: re.Pattern[str]) -> str | bool | None:
    """The value to show: itself when of the expected form, ``False`` when not, ``None``."""
    if value is None:
        return None
    return value if pattern.match(value) else False


@router.get(RETURN_PATH, response_class=HTMLResponse)
def merchant_return(request: Request) -> HTMLResponse:
    """The demo merchant's return page: the outcome and ids the hosted checkout sent back."""
    query = request.query_params
    lang = page_language(request)
    heading = _HEADINGS.get(query.get("outcome") or "", N_("Back from the checkout"))
    error_code = query.get("errorCode")
    reason = DECLINES.get(error_code or "") if query.get("outcome") == "failed" else None
    rows = [
        (translate(label, lang), testid, _shown(query.get(name), pattern))
        for name, label, testid, pattern in _FIELDS
    ]
    # The switcher's link carries only the values shown, never the others.
    valid = [(name, query[name]) for name, *_, pattern in _FIELDS
             if pattern.match(query.get(name, ""))]  # fmt: skip
    return render(
        "merchant_return.html",
        lang,
        switch_url=f"{RETURN_PATH}?{urlencode(valid)}" if valid else RETURN_PATH,
        static_base="",
        heading=translate(heading, lang),
        reason=translate(reason, lang) if reason else None,
        rows=rows,
    )
