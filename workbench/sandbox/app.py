"""The ASGI app factory."""

from __future__ import annotations

import gc
from collections.abc import AsyncIterator, Iterable
from contextlib import asynccontextmanager
from typing import Any

from fastapi import APIRouter, FastAPI
from fastapi_offline import FastAPIOffline

from workbench._version import __version__
from workbench.sandbox.apidocs.routes import DOCS_ASSETS
from workbench.sandbox.apidocs.routes import router as apidocs_router
from workbench.sandbox.checkout.routes.challenge import router as acs_router
from workbench.sandbox.checkout.routes.pages import router as checkout_router
from workbench.sandbox.config import SandboxConfig
from workbench.sandbox.control.routes import router as control_router
from workbench.sandbox.dashboard.live import EventSource, LiveHub
from workbench.sandbox.dashboard.routes import clock as dashboard_clock
from workbench.sandbox.dashboard.routes import events as dashboard_events
from workbench.sandbox.dashboard.routes import objects as dashboard_objects
from workbench.sandbox.dashboard.routes import requests as dashboard_requests
from workbench.sandbox.dashboard.routes import settings as dashboard_settings
from workbench.sandbox.dashboard.routes import shell as dashboard_shell
from workbench.sandbox.dashboard.site import mount as mount_dashboard
from workbench.sandbox.edge import (
    AddressRateLimit,
    BodyLimits,
    CanonicalPath,
    DocsHeaders,
    DuplicateKeys,
    ExchangeLog,
    HostGuard,
    KeyRateLimit,
    MerchantSwitches,
    MethodGate,
    RequestIdMiddleware,
    SignatureCheck,
    StrictReplay,
    allowed_hosts,
)
from workbench.sandbox.edge.handlers import install_error_handlers
from workbench.sandbox.front import router as front_router
from workbench.sandbox.lazy_routes import LazyAPIRoute, add_routes
from workbench.sandbox.merchant_return import PUBLIC_ROUTES as RETURN_PAGE_ROUTES
from workbench.sandbox.merchant_return import router as merchant_return_router
from workbench.sandbox.openapi import openapi_document
from workbench.sandbox.payments.routes import card_charge_route
from workbench.sandbox.payments.routes import router as payments_router
from workbench.sandbox.redaction import redact_access_log
from workbench.sandbox.refunds.routes import router as refunds_router
from workbench.sandbox.routing import FirstInLine
from workbench.sandbox.runtime import SandboxRuntime
from workbench.sandbox.sessions.routes import router as sessions_router
from workbench.sandbox.subscriptions.routes.merchant import router as subscriptions_router
from workbench.sandbox.subscriptions.routes.portal import router as portal_router

__all__ = ["DOCS_ASSETS", "create_app"]

#: The front page needs no signature (``/docs*`` and ``/openapi.json`` are public already).
_FRONT_DOOR = ("GET", r"^/$")
#: The dashboard signs in with its own session (`workbench.sandbox.dashboard`).
_DASHBOARD = ("*", r"^/dashboard(?:/|$)")

#: Allocations between two collections of the youngest objects, in a process the
#: sandbox owns (`SandboxConfig.owns_process`); Python's default is 700.
YOUNG_COLLECTION_THRESHOLD = 10_000


def create_app(
    config: SandboxConfig | None = None,
    *,
    routers: Iterable[APIRouter] = (),
    public_routes: Iterable[tuple[str, str]] = (),
) -> FastAPI:
    """Build a sandbox app; nothing touches disk or network until it starts.

    The database is opened (tables created or migrated, fixtures written) and background
    work started by the app's startup (lifespan), and stopped by its shutdown.

    Besides the API, it serves a front page at ``/`` and Swagger UI at ``/docs`` (assets
    from the package, no network), both without a signature.

    Args:
        config: how to run (default: `SandboxConfig()`, an SQLite file in the user data dir).
        routers: extra routers (subscriptions, hosted checkout pages) to include.
        public_routes: extra ``(method or "*", path regex)`` pairs needing no signature.

    Returns:
        The app; ``app.state.sandbox`` is its `SandboxRuntime`, open once the app has started.
        Should the startup fail (a database of a newer schema, say), the exception is
        also kept as ``app.state.startup_error``.
    """
    sandbox = SandboxRuntime(config or SandboxConfig())
    # The dashboard's live lists: each source a table read by cursor (`dashboard.live`).
    live = LiveHub((EventSource(), dashboard_requests.RequestSource()))
    # A request's row shows at once on this process's streams (others read each second).
    sandbox.on_request_logged = live.nudge

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        app.state.startup_error = None
        redact_access_log()  # uvicorn's logging is set up by now, in this process too
        try:
            sandbox.start()
        except Exception as exc:
            app.state.startup_error = exc
            raise
        if sandbox.config.owns_process:
            # No collection first: it took about 50 ms of every start, to free the few
            # hundred objects the collector had not yet reached.
            gc.freeze()
            # A request makes and frees a few thousand objects; collecting the youngest
            # every 700 walked each request's live frames and coroutines several times
            # (about 2% of a charge). Every 10,000 most are freed before a pass sees them.
            _, older, oldest = gc.get_threshold()
            gc.set_threshold(YOUNG_COLLECTION_THRESHOLD, older, oldest)
            gc.enable()  # `workbench sandbox` turns it off while it starts
        try:
            yield
        finally:
            live.close()
            sandbox.stop()

    app = FastAPIOffline(
        title="Payments Workbench sandbox",
        version=__version__,
        description="A stateful local emulator of the payments service interface.",
        redirect_slashes=False,
        lifespan=lifespan,
        static_url=DOCS_ASSETS,
        # `workbench.sandbox.apidocs` serves /docs, signing what it sends. There is no
        # /redoc: ReDoc loads its logo from its own CDN.
        docs_url=None,
        redoc_url=None,
        # No OpenTelemetry spans, metrics or logs: FastAPI's logs record validation
        # failures and exceptions with their messages wherever a provider is configured
        # (nothing about a request leaves the sandbox that way), and checking for a
        # provider cost every request about 2% of its time.
        telemetry={"tracing": False, "metrics": False, "logs": False, "operation_spans": False},
    )
    app.router.redirect_slashes = False
    app.state.sandbox = sandbox
    install_error_handlers(app)
    add_routes(
        app,
        (
            front_router,
            apidocs_router,
            sessions_router,
            payments_router,
            refunds_router,
            control_router,
            acs_router,
            subscriptions_router,
            portal_router,
            checkout_router,
            merchant_return_router,
        ),
    )
    # The dashboard's pages, in the order of its nav.
    mount_dashboard(
        app,
        (
            dashboard_requests.PAGE,
            dashboard_objects.PAGE,
            dashboard_events.PAGE,
            dashboard_clock.PAGE,
            dashboard_settings.PAGE,
            dashboard_shell.PAGE,
        ),
        sealer=sandbox.sealer,
        live=live,
    )
    for router in routers:
        app.include_router(router)

    # The card charge, the hottest request, is found at the first comparison.
    app.router.routes.insert(0, FirstInLine(card_charge_route))

    def healthz() -> dict[str, str]:
        return {"status": "ok"}

    app.router.add_api_route(
        "/healthz",
        healthz,
        methods=["GET"],
        include_in_schema=False,
        route_class_override=LazyAPIRoute,  # built with its first request, as the others
    )

    standard = not routers  # `create_app`'s own routes: the same document in every app

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            app.openapi_schema = openapi_document(app, standard=standard)
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]
    config = sandbox.config
    # The edge (`workbench.sandbox.edge`): Starlette wraps each added middleware around
    # the ones added before, so they are added innermost first, and a request meets them
    # from the last line up.
    app.add_middleware(DuplicateKeys)
    app.add_middleware(MerchantSwitches, sandbox=sandbox, latency_ms=config.latency_ms)
    app.add_middleware(KeyRateLimit, sandbox=sandbox)
    if config.strict_replay:
        app.add_middleware(StrictReplay, sandbox=sandbox)
    app.add_middleware(
        SignatureCheck,
        sandbox=sandbox,
        public_routes=(_FRONT_DOOR, _DASHBOARD, *RETURN_PAGE_ROUTES, *public_routes),
    )
    app.add_middleware(BodyLimits)
    # Outside the signature check, which lets these routes through uncounted; inside
    # the canonical path, so that ``/x/`` is counted as ``/x``.
    app.add_middleware(AddressRateLimit, limiter=sandbox)
    # Before any work: a method the path does not take is never counted, read or stored.
    app.add_middleware(MethodGate, routes=app.router.routes)
    app.add_middleware(CanonicalPath)
    app.add_middleware(DocsHeaders)
    app.add_middleware(HostGuard, hosts=allowed_hosts(config.public_base_url, config.allowed_hosts))
    if sandbox.request_queue is not None:  # the request log (`workbench.sandbox.requestlog`)
        app.add_middleware(ExchangeLog, sink=sandbox.request_queue)
    app.add_middleware(RequestIdMiddleware)
    return app
