"""Rendering the hosted pages: Jinja2 templates shipped in the package, the QR image.

Templates live in ``workbench/sandbox/checkout/templates`` and are autoescaped; the
stylesheet is ``static/checkout.css``. Amounts are shown with `workbench.money.format_try`
(``1.234,56 TL``). Jinja2 and segno are imported with the first page that needs them:
a sandbox that only answers the API never loads them.
"""

from __future__ import annotations

from functools import cache
from importlib import resources
from typing import TYPE_CHECKING, Any

from starlette.responses import HTMLResponse

from workbench.money import format_try

if TYPE_CHECKING:
    import jinja2
    from markupsafe import Markup

__all__ = ["PAGE_HEADERS", "qr_svg", "render", "script", "stylesheet"]

#: Pages on this machine may frame the hosted pages (the notebooks show them in an
#: IFrame from JupyterLab's origin); no other site may.
FRAME_ANCESTORS = "'self' http://127.0.0.1:* http://localhost:*"

#: Sent with every HTML page of the sandbox: only its own stylesheet and script run (no
#: inline script, so an injected one would not), no caching of a page that holds a
#: session's state, no MIME sniffing, no full URL (with a session id) in a Referer.
PAGE_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        f"base-uri 'none'; frame-ancestors {FRAME_ANCESTORS}"
    ),
    "Referrer-Policy": "no-referrer",
    "X-Content-Type-Options": "nosniff",
    "Cache-Control": "no-store",
}


@cache
def _environment() -> jinja2.Environment:
    import jinja2

    env = jinja2.Environment(
        loader=jinja2.PackageLoader("workbench.sandbox.checkout", "templates"),
        autoescape=jinja2.select_autoescape(default=True, default_for_string=True),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["lira"] = format_try
    return env


def render(template: str, status: int = 200, **context: Any) -> HTMLResponse:
    """An HTML response from a template of the package."""
    html = _environment().get_template(template).render(**context)
    return HTMLResponse(html, status_code=status, headers=PAGE_HEADERS)


def qr_svg(payload: str) -> Markup:
    """The payload as an inline SVG QR code (error correction M, 4-module quiet zone)."""
    import segno
    from markupsafe import Markup

    code = segno.make(payload, error="m", micro=False)
    svg = code.svg_inline(scale=5, border=4, dark="#000", light="#fff", title="TR QR code")
    return Markup(svg)  # noqa: S704 - segno's own SVG, no user text in markup position


@cache
def stylesheet() -> bytes:
    """The pages' stylesheet."""
    return _static("checkout.css")


@cache
def script() -> bytes:
    """The pages' script (submit once, focus the error, post the 3-D Secure answer back)."""
    return _static("checkout.js")


def _static(name: str) -> bytes:
    return resources.files("workbench.sandbox.checkout").joinpath(f"static/{name}").read_bytes()
