"""Rendering the hosted pages: Jinja2 templates shipped in the package, the QR image.

Templates live in ``workbench/sandbox/checkout/templates`` and are autoescaped; the
stylesheet is ``static/checkout.css``. Each language of `languages` has its own
environment (built on its first page) with Jinja2's i18n extension holding that
language's catalogue, so two pages drawn at once in two languages share nothing.
Amounts (``lira``) and dates (``moment``) are written the language's way. Jinja2 and
segno are imported with the first page that needs them: a sandbox that only answers the
API never loads them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache, partial
from importlib import resources
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from starlette.requests import Request
from starlette.responses import HTMLResponse

from workbench.money import split_installments
from workbench.sandbox.checkout import languages
from workbench.sandbox.framing import FRAME_ANCESTORS

if TYPE_CHECKING:
    import jinja2
    from markupsafe import Markup

__all__ = [
    "PAGE_HEADERS",
    "PageLanguage",
    "here",
    "page_environment",
    "page_language",
    "qr_svg",
    "render",
    "script",
    "stylesheet",
    "translate",
    "with_lang",
]

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


@dataclass(frozen=True, slots=True)
class PageLanguage:
    """The language a request's page is drawn in.

    Attributes:
        code: ``tr`` or ``en``.
        chosen: it came from ``?lang=`` (the page sets the cookie that keeps it).
    """

    code: str
    chosen: bool = False


def page_language(request: Request) -> PageLanguage:
    """The page's language by `languages.choose`'s rules."""
    query = request.query_params.get("lang")
    code = languages.choose(
        query, request.cookies.get(languages.COOKIE), request.headers.get("accept-language")
    )
    return PageLanguage(code, chosen=query is not None and query.lower() == code)


def page_environment(package: str, lang: str) -> jinja2.Environment:
    """The templates of ``package`` (its ``templates`` folder) in language ``lang``, as
    every page of the sandbox renders them: autoescaped, undefined names refused, the
    language's catalogue, and the ``lira`` and ``with_lang`` filters.

    Args:
        package: the package holding the templates (the hosted pages', the dashboard's).
        lang: a language code of `languages`.
    """
    import jinja2  # with the first page: a sandbox that only answers the API never loads it

    env = jinja2.Environment(
        loader=jinja2.PackageLoader(package, "templates"),
        autoescape=jinja2.select_autoescape(default=True, default_for_string=True),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        extensions=["jinja2.ext.i18n"],
    )
    env.install_gettext_translations(languages.translations(lang), newstyle=True)  # type: ignore[attr-defined]
    env.filters["lira"] = partial(languages.amount, code=lang)
    env.filters["with_lang"] = with_lang
    return env


@cache
def _environment(lang: str) -> jinja2.Environment:
    env = page_environment("workbench.sandbox.checkout", lang)
    env.filters["moment"] = partial(languages.moment, code=lang)
    env.filters["installments"] = split_installments
    return env


def translate(message: str, lang: PageLanguage, params: Mapping[str, object] | None = None) -> str:
    """A gettext message (`messages.N_`) in ``lang``, its placeholders filled."""
    text = languages.translations(lang.code).gettext(message)
    return text % dict(params) if params else text


def here(request: Request) -> str:
    """The request's own address, path and query, without scheme and host (a page's link)."""
    query = request.url.query
    return f"{request.url.path}?{query}" if query else request.url.path


def with_lang(url: str, lang: str) -> str:
    """``url`` with its ``lang`` query parameter set to ``lang`` (others kept, in order)."""
    parts = urlsplit(url)
    query = [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if k != "lang"]
    return urlunsplit(parts._replace(query=urlencode([*query, ("lang", lang)])))


def render(
    template: str,
    lang: PageLanguage,
    status: int = 200,
    *,
    switch_url: str | None = None,
    **context: Any,
) -> HTMLResponse:
    """An HTML response from a template of the package, in ``lang``.

    Args:
        template: the template's name.
        lang: the page's language (`page_language`); the cookie is set when it was chosen.
        status: the HTTP status.
        switch_url: the address the language switcher links to, with ``?lang=`` set to
            each language (``None``: a page with no address to reload, no switcher).
        **context: the template's variables.
    """
    switcher = [
        (language, with_lang(switch_url, code))
        for code, language in languages.LANGUAGES.items()
        if switch_url is not None
    ]
    page = _environment(lang.code).get_template(template)
    html = page.render(lang=lang.code, switcher=switcher, **context)
    headers = {**PAGE_HEADERS, "Content-Language": lang.code}
    response = HTMLResponse(html, status_code=status, headers=headers)
    if lang.chosen:
        response.set_cookie(languages.COOKIE, lang.code, path="/", httponly=True, samesite="lax")
    return response


def qr_svg(payload: str) -> Markup:
    """The payload as an inline SVG QR code (error correction M, 4-module quiet zone)."""
    import segno
    from markupsafe import Markup

    code = segno.make(payload, error="m", micro=False)
    svg = code.svg_inline(scale=5, border=4, dark="#000", light="#fff", title="TR QR")
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
