"""`connect`: the client a notebook uses, from the ``WORKBENCH_*`` settings."""

from __future__ import annotations

from workbench._client import Client
from workbench.config import Settings

__all__ = ["connect"]


def connect(settings: Settings | None = None) -> Client:
    """A `Client` for ``settings`` (default: ``WORKBENCH_*`` variables, ``.env``, demo keys).

    The notebooks call this so that the same cells run against the embedded sandbox
    (``make run``, the tests) and against the provider's sandbox when ``WORKBENCH_*``
    point there.
    """
    return Client(settings=settings or Settings.load())
