"""HTTP routes, one router per area; the app factory includes them."""

from workbench.sandbox.routes.acs import router as acs_router

__all__ = [
    "acs_router",
]
