"""Who may frame the sandbox's pages: one rule for the hosted pages and Swagger UI."""

from __future__ import annotations

__all__ = ["FRAME_ANCESTORS"]

#: Pages on this machine may frame the hosted pages and ``/docs`` (the notebooks show
#: them in an IFrame from JupyterLab's origin); no other site may.
FRAME_ANCESTORS = "'self' http://127.0.0.1:* http://localhost:*"
