"""A demo "merchant return" page: where the hosted checkout's ``returnUrl`` can land locally.

A real ``returnUrl`` is a page of the merchant's own site. The notebooks and the
``make run`` demo have no merchant site, so the sandbox serves one at
``GET /demo/merchant/return``: it shows the query the hosted page added
(``outcome``, ``paymentId``, ``sessionId``, ``errorCode``) and reminds that the
payment is decided from ``GET /v1/payments/{id}`` or the webhook, not from this
redirect. It needs no signature (a browser lands on it) and answers HTML; a
value that is not of the expected form is shown as not valid, never echoed.
"""

from __future__ import annotations

import re
from html import escape

from fastapi import APIRouter, Request
from starlette.responses import HTMLResponse

from workbench.sandbox.checkout.rendering import PAGE_HEADERS

__all__ = ["PUBLIC_ROUTES", "RETURN_PATH", "router"]

#: The page's path; a session's ``returnUrl`` is ``{sandbox base URL}`` + this.
RETURN_PATH = "/demo/merchant/return"
#: The routes of this module that take no signature (for the auth middleware).
PUBLIC_ROUTES: tuple[tuple[str, str], ...] = (("GET", rf"^{re.escape(RETURN_PATH)}$"),)

router = APIRouter(tags=["demo"], include_in_schema=False)

#: What each query field may hold; anything else is reported as not valid.
_FIELDS: tuple[tuple[str, str, str, re.Pattern[str]], ...] = (
    ("outcome", "Outcome", "outcome", re.compile(r"^(success|failed)$")),
    ("paymentId", "Payment id", "payment-id", re.compile(r"^pay_[0-9A-Za-z]{1,64}$")),
    ("sessionId", "Session id", "session-id", re.compile(r"^[0-9A-Fa-f-]{36}$")),
    ("errorCode", "Error code", "error-code", re.compile(r"^SVC-[A-Z]{2,4}-\d{4}$")),
)
_HEADINGS = {
    "success": "Thank you: the checkout says the payment went through",
    "failed": "The payment did not go through",
}


def _row(label: str, testid: str, value: str | None, pattern: re.Pattern[str]) -> str:
    if value is None:
        shown = "<em>not given</em>"
    elif pattern.match(value):
        shown = f"<code>{escape(value)}</code>"
    else:
        shown = "<em>not a valid value</em>"
    return f'<tr><th scope="row">{label}</th><td data-testid="{testid}">{shown}</td></tr>'


@router.get(RETURN_PATH, response_class=HTMLResponse)
def merchant_return(request: Request) -> HTMLResponse:
    """The demo merchant's return page: the outcome and ids the hosted checkout sent back."""
    query = request.query_params
    outcome = query.get("outcome")
    heading = _HEADINGS.get(outcome or "", "Back from the checkout")
    rows = "".join(
        _row(label, testid, query.get(name), pattern) for name, label, testid, pattern in _FIELDS
    )
    page = (
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>"
        "<meta name='viewport' content='width=device-width, initial-scale=1'>"
        "<title>Demo merchant: back from checkout</title>"
        "<link rel='stylesheet' href='/checkout/static/checkout.css'></head>"
        "<body><main id='main'>"
        "<p>Demo merchant (served by the Payments Workbench sandbox in place of your "
        "<code>returnUrl</code>)</p>"
        f"<h1 data-testid='heading'>{escape(heading)}</h1>"
        f"<table>{rows}</table>"
        "<p>This redirect is a hint for what to show the buyer. Your server decides on the "
        "order from <code>GET /v1/payments/{id}</code> or the signed webhook: the buyer may "
        "close the tab before coming back.</p></main></body></html>"
    )
    return HTMLResponse(page, headers=PAGE_HEADERS)
