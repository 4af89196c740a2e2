"""The sandbox's front door: ``GET /``, a page saying what this server is and where to go.

Modules: `routes` (the route and what the page shows). The template ships in
``templates/`` and extends the hosted pages' ``base.html``, so it has their look and
stylesheet; nothing on the page is loaded from another host.
"""

from workbench.sandbox.front.routes import GUIDE_URL, router

__all__ = ["GUIDE_URL", "router"]
