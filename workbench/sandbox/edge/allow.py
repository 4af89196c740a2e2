"""The methods each path takes, read from the app's own routes (`RouteMethods`).

RFC 9110 §15.5.6 says a 405 answer must list the target's methods in ``Allow``. A path
can be served by several routes (one per method, or a route with a parameter beside a
fixed one), so the union of every route matching the path is taken, as Starlette's
router would try them. A page (a ``GET`` route outside the API document: the hosted
pages, their stylesheet and script, the front page) also takes ``HEAD``, answered as its
``GET`` without a body (RFC 9110 §9.3.2); the signed API takes only its own methods.

The table is read from the routes once; the fixed paths (the card charge's among them)
are then one dictionary look-up, and a path with a parameter one pass over the routes.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from starlette.routing import BaseRoute
from starlette.types import Scope

__all__ = ["Allowed", "RouteMethods", "allow_header"]


@dataclass(frozen=True, slots=True)
class Allowed:
    """What a path takes.

    Attributes:
        methods: every method some route at the path serves (``HEAD`` included for a page).
        head_as_get: ``HEAD`` is answered by the path's ``GET`` route (a page).
    """

    methods: frozenset[str]
    head_as_get: bool

    @property
    def header(self) -> str:
        """The ``Allow`` value."""
        return ", ".join(sorted(self.methods))


@dataclass(frozen=True, slots=True)
class _Route:
    regex: re.Pattern[str]
    methods: frozenset[str]
    page: bool
    fixed: str | None  # the path, when it has no parameter


def _declared(routes: Sequence[BaseRoute]) -> list[_Route]:
    found: list[_Route] = []
    for route in routes:
        # FastAPI keeps an included router's routes whole: look inside it. Read from the
        # instance's own attributes: a lazy route builds itself when asked for another.
        kept = getattr(route, "__dict__", {})
        inner = getattr(kept.get("original_router"), "routes", None)
        if inner is not None:
            found += _declared(inner)
            continue
        methods = getattr(route, "methods", None)
        regex = getattr(route, "path_regex", None)
        if not methods or regex is None:  # a mount (static files), `FirstInLine`
            continue
        page = "GET" in methods and not getattr(route, "include_in_schema", True)
        fixed = None if getattr(route, "param_convertors", None) else getattr(route, "path", None)
        found.append(_Route(regex, frozenset(methods), page, fixed))
    return found


class RouteMethods:
    """Which methods each path takes, from the app's routes, read when first asked.

    Args:
        routes: the application's route list (read on first use, so every route added
            while the app is put together is in it).
    """

    def __init__(self, routes: Sequence[BaseRoute]) -> None:
        self._source = routes
        self._routes: list[_Route] | None = None
        self._fixed: dict[str, Allowed | None] = {}

    def _table(self) -> list[_Route]:
        if self._routes is None:
            self._routes = _declared(self._source)
            fixed = {r.fixed for r in self._routes if r.fixed is not None}
            self._fixed = {path: self._scan(path) for path in fixed}
        return self._routes

    def _scan(self, path: str) -> Allowed | None:
        methods: set[str] = set()
        head_as_get = False
        for route in self._routes or ():
            if route.regex.match(path):
                methods |= route.methods
                head_as_get |= route.page
        if not methods:
            return None
        if head_as_get:
            methods.add("HEAD")
        return Allowed(frozenset(methods), head_as_get)

    def for_path(self, path: str) -> Allowed | None:
        """What ``path`` takes; ``None`` when no route serves it (a 404, not a 405)."""
        routes = self._table()
        if path in self._fixed:
            return self._fixed[path]
        return self._scan(path) if routes else None


def allow_header(routes: Sequence[BaseRoute], scope: Scope) -> str:
    """The methods the routes serve at the request's path, as an ``Allow`` value.

    Args:
        routes: the application's routes.
        scope: the refused request's ASGI scope.
    """
    allowed = RouteMethods(routes).for_path(str(scope["path"]))
    return allowed.header if allowed is not None else ""
