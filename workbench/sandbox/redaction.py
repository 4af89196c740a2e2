"""Bearers kept out of logs: portal hashes and checkout session ids in logged paths.

The buyer portal's path carries its bearer (``/v1/public/subscriptions/{hash}``), which
the database keeps only as a SHA-256; a hosted page's path carries its session id
(``/checkout/{sessionId}``), the bearer of that page, and a finished session's return
address carries it in ``?sessionId=``. uvicorn's access log (``workbench sandbox``) and
the sandbox's own error lines print paths; both go through `redact_path`, so a log
shows ``/v1/public/subscriptions/[publicHash]/cancel`` and ``/checkout/[sessionId]/pay``,
never the link.
"""

from __future__ import annotations

import logging
import re

__all__ = ["ACCESS_LOGGER", "RedactedAccessLog", "redact_access_log", "redact_path"]

#: The logger uvicorn writes each request's line to.
ACCESS_LOGGER = "uvicorn.access"
_PORTAL = re.compile(r"(/v1/public/subscriptions/)[^/?#\s\"]+")
#: A hosted page's session id (its stylesheet and script under ``static/`` are no bearer).
_CHECKOUT = re.compile(r"(/checkout/)(?!static/)[^/?#\s\"]+")
_SESSION_PARAM = re.compile(r"([?&]sessionId=)[^&#\s\"]+")


def redact_path(path: str) -> str:
    """``path`` with its bearers replaced: ``[publicHash]``, ``[sessionId]``."""
    path = _PORTAL.sub(r"\1[publicHash]", path)
    path = _CHECKOUT.sub(r"\1[sessionId]", path)
    return _SESSION_PARAM.sub(r"\1[sessionId]", path)


class RedactedAccessLog(logging.Filter):
    """Redacts the path (and, to be sure, the whole message) of uvicorn's access lines."""

    def filter(self, record: logging.LogRecord) -> bool:
        """Rewrite the record in place; every record is kept."""
        if isinstance(record.args, tuple):
            record.args = tuple(
                redact_path(arg) if isinstance(arg, str) else arg for arg in record.args
            )
        if isinstance(record.msg, str):
            record.msg = redact_path(record.msg)
        return True


def redact_access_log() -> None:
    """Put `RedactedAccessLog` on uvicorn's access logger, once per process."""
    logger = logging.getLogger(ACCESS_LOGGER)
    if not any(isinstance(f, RedactedAccessLog) for f in logger.filters):
        logger.addFilter(RedactedAccessLog())
