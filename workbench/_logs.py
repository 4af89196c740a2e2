"""``WORKBENCH_LOG=debug``: the client's log lines, on stderr, with nothing secret in them.

The client never formats a secret key, a full signature or a full API key
into a message in the first place; `configure_logging` only decides where the
lines go and from which level.
"""

from __future__ import annotations

import logging
import os

__all__ = ["ENV_LOG", "configure_logging"]

ENV_LOG = "WORKBENCH_LOG"
_LEVELS = {"debug": logging.DEBUG, "info": logging.INFO, "warning": logging.WARNING}
_HANDLER_NAME = "workbench-stderr"


def configure_logging(level: str | None = None) -> None:
    """Send the ``workbench`` logger's lines to stderr from ``level`` up.

    Args:
        level: ``debug``, ``info`` or ``warning``; ``None`` reads ``WORKBENCH_LOG``
            and does nothing when it is unset, leaving logging to the application.
    """
    name = (level if level is not None else os.environ.get(ENV_LOG, "")).strip().lower()
    if name not in _LEVELS:
        return
    logger = logging.getLogger("workbench")
    logger.setLevel(_LEVELS[name])
    if not any(h.get_name() == _HANDLER_NAME for h in logger.handlers):
        handler = logging.StreamHandler()
        handler.set_name(_HANDLER_NAME)
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
        logger.addHandler(handler)
