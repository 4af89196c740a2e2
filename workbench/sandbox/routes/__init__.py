"""HTTP routes, one router per area; the app factory includes them."""

from workbench.sandbox.routes.acs import router as acs_router
from workbench.sandbox.routes.payments import router as payments_router
from workbench.sandbox.routes.portal import router as portal_router
from workbench.sandbox.routes.sessions import router as sessions_router
from workbench.sandbox.routes.subscriptions import router as subscriptions_router
from workbench.sandbox.routes.tokens import router as tokens_router

__all__ = [
    "acs_router",
    "payments_router",
    "portal_router",
    "sessions_router",
    "subscriptions_router",
    "tokens_router",
]
