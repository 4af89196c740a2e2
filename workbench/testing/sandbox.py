"""A sandbox for a test: started on a free 127.0.0.1 port, and a client signed for it."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workbench._client import Client
from workbench._extras import require
from workbench.config import DEFAULT_API_KEY, DEFAULT_SECRET_KEY

if TYPE_CHECKING:
    from workbench.sandbox import SandboxServer

__all__ = ["client_for", "running_sandbox"]


@contextmanager
def running_sandbox(*, db_dir: Path | None = None, **config: Any) -> Iterator[SandboxServer]:
    """Start a sandbox on a free 127.0.0.1 port and stop it when the block ends.

    Its database is a new SQLite file in ``db_dir`` if given, else an in-memory SQLite
    database, unless ``db_url`` is given; the demo merchant uses the client's default
    keys unless ``api_key`` / ``secret_key`` are given. The reconciler runs in the
    background unless ``run_reconciler_in_background=False`` is passed.

    Args:
        db_dir: the folder of the SQLite database.
        **config: `workbench.sandbox.SandboxConfig` fields, e.g. ``latency_ms=50``.

    Raises:
        MissingExtraError: the ``[sandbox]`` extra is not installed.
    """
    require("workbench.testing.running_sandbox", "sandbox")
    from workbench.sandbox import SandboxConfig, SandboxServer

    config.setdefault("api_key", DEFAULT_API_KEY)
    config.setdefault("secret_key", DEFAULT_SECRET_KEY)
    config.setdefault(
        "db_url", "sqlite://" if db_dir is None else f"sqlite:///{db_dir / 'sandbox.db'}"
    )
    with SandboxServer(SandboxConfig(**config)) as server:
        yield server


def client_for(server: SandboxServer, **options: Any) -> Client:
    """A `Client` signed with the keys of ``server``'s demo merchant, pointed at it.

    Args:
        server: a running sandbox.
        **options: further `Client` arguments (``max_retries``, ``timeout``...).
    """
    config = server.config
    return Client(config.api_key, config.secret_key, server.base_url, **options)
