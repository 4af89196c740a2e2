"""HTTP routes, one router per area; the app factory includes them."""

from workbench.sandbox.routes.acs import router as acs_router
from workbench.sandbox.routes.portal import router as portal_router
from workbench.sandbox.routes.subscriptions import router as subscriptions_router

__all__ = [
    "acs_router",
    "portal_router",
    "subscriptions_router",
]
