"""``GET /docs``: Swagger UI, with a script that signs each "Try it out" request.

The page is FastAPI's Swagger UI page with one more script, `SIGNING_SCRIPT`, loaded
right after Swagger UI's bundle and before the page starts it. The script shows the
Authorize dialog one scheme, the API key and the secret key, in place of the three
headers of the OpenAPI document (``X-Api-Key``, ``X-Signature``, ``X-Timestamp``), and
signs each request in the browser as `workbench.signing` does (WebCrypto's
HMAC-SHA256 over the canonical string). The secret key stays in the page's memory:
Swagger UI is told not to persist what the dialog takes, and the script takes it off
the request before it is sent.
"""

from __future__ import annotations

from functools import cache
from importlib import resources

from fastapi import APIRouter, Request
from fastapi.openapi.docs import get_swagger_ui_html, get_swagger_ui_oauth2_redirect_html
from starlette.responses import HTMLResponse, Response

from workbench.sandbox.lazy_routes import LazyAPIRoute

__all__ = ["DOCS_ASSETS", "DOCS_PATH", "OAUTH2_REDIRECT_PATH", "SIGNING_SCRIPT", "router"]

#: The page.
DOCS_PATH = "/docs"
#: Swagger UI's OAuth2 return page (FastAPI's; the sandbox has no OAuth2 scheme).
OAUTH2_REDIRECT_PATH = "/docs/oauth2-redirect"
#: Where Swagger UI's script and stylesheet are served from (shipped by the
#: fastapi-offline package), so that ``/docs`` works with no network.
DOCS_ASSETS = "/docs/static"
#: The signing script, a file the page loads (``static/signing.js`` of this package).
SIGNING_SCRIPT = "/docs/signing.js"

router = APIRouter(route_class=LazyAPIRoute, redirect_slashes=False, include_in_schema=False)


@router.get(DOCS_PATH)
def docs_page(request: Request) -> HTMLResponse:
    """Swagger UI over the sandbox's OpenAPI document, signing what it sends."""
    root = request.scope.get("root_path", "")
    bundle = f"{root}{DOCS_ASSETS}/swagger-ui-bundle.js"
    page = get_swagger_ui_html(
        openapi_url=f"{root}{request.app.openapi_url}",
        title=f"{request.app.title} - Swagger UI",
        oauth2_redirect_url=OAUTH2_REDIRECT_PATH,
        swagger_js_url=bundle,
        swagger_css_url=f"{root}{DOCS_ASSETS}/swagger-ui.css",
        swagger_favicon_url=f"{root}{DOCS_ASSETS}/favicon.png",
        swagger_ui_parameters={"persistAuthorization": False},
    )
    html = bytes(page.body).decode()
    tag = f'<script src="{bundle}"></script>'
    if tag not in html:
        raise RuntimeError(f"FastAPI's Swagger UI page no longer loads {bundle} as {tag}")
    signing = f'<script src="{root}{SIGNING_SCRIPT}"></script>'
    return HTMLResponse(html.replace(tag, f"{tag}\n    {signing}", 1))


@router.get(OAUTH2_REDIRECT_PATH)
def oauth2_redirect() -> HTMLResponse:
    """Swagger UI's OAuth2 return page, as FastAPI serves it."""
    return get_swagger_ui_oauth2_redirect_html()


@router.get(SIGNING_SCRIPT)
def signing_script() -> Response:
    """The script that signs Swagger UI's requests in the browser."""
    return Response(_script(), media_type="text/javascript; charset=utf-8")


@cache
def _script() -> bytes:
    return resources.files("workbench.sandbox.apidocs").joinpath("static/signing.js").read_bytes()
