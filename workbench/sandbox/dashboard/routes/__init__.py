"""The dashboard's pages, a module each; each declares a `site.Page` named ``PAGE``."""

from __future__ import annotations

from fastapi import APIRouter

from workbench.sandbox.lazy_routes import LazyAPIRoute

__all__ = ["page_router"]


def page_router() -> APIRouter:
    """A router for a page module: lazy routes, no OpenAPI operation, no slash redirect."""
    return APIRouter(route_class=LazyAPIRoute, redirect_slashes=False, include_in_schema=False)
