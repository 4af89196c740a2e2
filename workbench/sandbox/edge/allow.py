"""The ``Allow`` header of a 405 answer: every method some route serves at the path.

RFC 9110 §15.5.6 says a 405 answer must list the target's methods. Starlette names
only the first route that matched the path; a path can be served by several routes
(one per method), so the union is taken here.
"""

from __future__ import annotations

from collections.abc import Sequence

from starlette.routing import BaseRoute, Match
from starlette.types import Scope

__all__ = ["allow_header"]


def allow_header(routes: Sequence[BaseRoute], scope: Scope) -> str:
    """The methods the routes serve at the request's path, as an ``Allow`` value.

    Args:
        routes: the application's routes.
        scope: the refused request's ASGI scope.
    """
    return ", ".join(sorted(_methods(routes, scope)))


def _methods(routes: Sequence[BaseRoute], scope: Scope) -> set[str]:
    methods: set[str] = set()
    for route in routes:
        # FastAPI keeps an included router's routes whole (every router here is included
        # without a prefix): look inside it rather than at its first match.
        inner = getattr(getattr(route, "original_router", None), "routes", None)
        if inner is not None:
            methods |= _methods(inner, scope)
        elif getattr(route, "methods", None) and route.matches(scope)[0] is not Match.NONE:
            methods.update(route.methods)  # type: ignore[attr-defined]
    return methods
