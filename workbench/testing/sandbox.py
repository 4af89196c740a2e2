"""A sandbox for a test: started on a free 127.0.0.1 port, and a client signed for it.

A test run's processes (pytest-xdist's workers) share one sandbox (`shared_sandbox`);
a sandbox already running elsewhere is an `ExternalSandbox`.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workbench._client import Client
from workbench._extras import require
from workbench.config import DEFAULT_API_KEY, DEFAULT_SECRET_KEY

if TYPE_CHECKING:
    from workbench.sandbox import SandboxServer

__all__ = ["ExternalSandbox", "client_for", "running_sandbox", "shared_sandbox"]


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


@dataclass(frozen=True, slots=True)
class ExternalSandbox:
    """A sandbox already running elsewhere (``--workbench-url``), which tests share.

    Attributes:
        base_url: its address.
        admin_token: its admin token, where it is reachable beyond loopback (kept out
            of ``repr``).
    """

    base_url: str
    admin_token: str | None = field(default=None, repr=False)


#: How long a process waits for the shared sandbox's lock (another process starting it).
_LOCK_SECONDS = 120.0
#: How long the process that started the shared sandbox waits, once its own tests are
#: done, for the other processes' tests before it stops the sandbox.
_OTHERS_SECONDS = 3600.0


@contextmanager
def _file_lock(path: Path) -> Iterator[None]:
    """One process at a time: the file is created exclusively, and removed on release."""
    deadline = time.monotonic() + _LOCK_SECONDS
    while True:
        try:
            fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
        except FileExistsError:
            if time.monotonic() > deadline:
                raise TimeoutError(f"{path} stayed locked for {_LOCK_SECONDS:g} s") from None
            time.sleep(0.05)
            continue
        os.close(fd)
        break
    try:
        yield
    finally:
        path.unlink(missing_ok=True)


@contextmanager
def shared_sandbox(
    folder: Path, user: str, **config: Any
) -> Iterator[SandboxServer | ExternalSandbox]:
    """One sandbox for every process of a test run that shares ``folder`` (xdist's workers).

    The first process to ask starts it (`running_sandbox`, its database in ``folder``)
    and writes its address there; the others use it. Each registers as a user while it
    needs it; the process that started it stops it once no other user is left (so a
    worker whose tests end first keeps it running for the others).

    Args:
        folder: a folder every process of the run sees (xdist: the run's base temp).
        user: this process's name among them (xdist's worker id).
        **config: `SandboxConfig` fields for the sandbox, if this process starts it.
    """
    users = folder / "workbench-sandbox-users"
    users.mkdir(parents=True, exist_ok=True)
    found = folder / "workbench-sandbox.url"
    lock = folder / "workbench-sandbox.lock"
    me = users / user
    with ExitStack() as stack:
        # Left in reverse: this process's registration, then (the starter) the wait for
        # the others, then the sandbox itself.
        with _file_lock(lock):  # held while the first process starts it
            if found.exists():
                shared: SandboxServer | ExternalSandbox = ExternalSandbox(
                    found.read_text("utf-8").strip()
                )
            else:
                shared = stack.enter_context(running_sandbox(db_dir=folder, **config))
                stack.callback(_when_others_are_done, users, found, lock)
                found.write_text(shared.base_url, "utf-8")
            me.touch()
            stack.callback(me.unlink, missing_ok=True)
        yield shared


def _when_others_are_done(users: Path, found: Path, lock: Path) -> None:
    """Wait until no other process uses the shared sandbox, then withdraw its address
    (the sandbox stops right after: its context exits next)."""
    deadline = time.monotonic() + _OTHERS_SECONDS
    while True:
        with _file_lock(lock):
            if not any(users.iterdir()) or time.monotonic() > deadline:
                found.unlink(missing_ok=True)
                return
        time.sleep(0.2)
