"""`SandboxServer`: the sandbox on a real port, in a background thread (tests, notebooks)."""

from __future__ import annotations

import contextlib
import os
import socket
import threading
import time
from types import TracebackType
from typing import Any

import uvicorn
from fastapi import FastAPI

from workbench.sandbox.app import create_app
from workbench.sandbox.config import SandboxConfig
from workbench.sandbox.edge.httplimits import HttpLimits
from workbench.sandbox.runtime import SandboxRuntime

__all__ = ["SandboxServer", "http_settings"]


def http_settings(config: SandboxConfig) -> dict[str, Any]:
    """uvicorn settings: the configured HTTP limits (header cap and deadline, body deadline
    and rate, connections per address, keep-alive), no trust in forwarding headers, and a
    log without colours where ``NO_COLOR`` is set."""
    limits = HttpLimits(
        max_header_bytes=config.max_header_bytes,
        header_timeout=config.header_timeout_seconds,
        implementation=config.http_implementation,
        body_timeout=config.body_timeout_seconds,
        min_body_rate=config.min_body_rate,
        max_connections_per_address=config.max_connections_per_address,
    )
    return {
        **limits.uvicorn_settings(),
        "timeout_keep_alive": config.keep_alive_seconds,
        # uvicorn would take the scheme and client from X-Forwarded-* sent from 127.0.0.1:
        # unsigned headers, which then shaped the checkoutUrl (`context.base_url_of`).
        # Behind a proxy, --public-url says the public address instead.
        "proxy_headers": False,
        # https://no-color.org: set and not empty, no colour codes whatever the terminal.
        "use_colors": False if os.environ.get("NO_COLOR") else None,
    }


class SandboxServer:
    """Serve a sandbox with uvicorn on ``host:port`` (0: a free port) in a thread.

    Use as a context manager, or call `start` and `stop`::

        with SandboxServer(SandboxConfig(db_url="sqlite://")) as server:
            httpx2.get(server.base_url + "/openapi.json")

    Args:
        config: the sandbox configuration (default: `SandboxConfig()`).
        host: interface to bind (default: the configuration's ``listen_host``, which
            the server then takes as given).
        port: port to bind; 0 picks a free one.
        app: an app already built by `create_app` (default: built from ``config``).
    """

    def __init__(
        self,
        config: SandboxConfig | None = None,
        host: str | None = None,
        port: int = 0,
        *,
        app: FastAPI | None = None,
    ) -> None:
        self.config = config or SandboxConfig()
        if host is not None:
            self.config.listen_host = host
        self.host = self.config.listen_host
        self.port = port
        self.app = app if app is not None else create_app(self.config)
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None

    @property
    def sandbox(self) -> SandboxRuntime:
        """The running `SandboxRuntime` (clock, reconciler, database)."""
        sandbox: SandboxRuntime = self.app.state.sandbox
        return sandbox

    @property
    def base_url(self) -> str:
        """``http://host:port`` of the running server (loopback's for a wildcard host)."""
        host = {"0.0.0.0": "127.0.0.1", "::": "::1", "": "127.0.0.1"}.get(  # noqa: S104
            self.host, self.host
        )
        return f"http://[{host}]:{self.port}" if ":" in host else f"http://{host}:{self.port}"

    def start(self, timeout: float = 20.0) -> SandboxServer:
        """Bind, start serving, and wait until requests are accepted.

        Raises:
            SchemaVersionError: the database was written by a schema this version
                cannot migrate (and any other error the app's startup raised).
            RuntimeError: the server did not start within ``timeout`` seconds.
        """
        family = socket.AF_INET6 if ":" in self.host else socket.AF_INET
        # IPPROTO_TCP explicitly: asyncio turns Nagle off only on sockets it sees as TCP;
        # without it every keep-alive response waits ~40 ms for a delayed ACK.
        sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((self.host, self.port))
        self.port = sock.getsockname()[1]
        config = uvicorn.Config(
            self.app,
            log_level="warning",
            access_log=False,
            lifespan="on",
            timeout_graceful_shutdown=5,
            **http_settings(self.config),
        )
        server = uvicorn.Server(config)
        self._server = server

        def serve() -> None:
            # uvicorn ends a failed startup with sys.exit(3), which `start` reports instead.
            with contextlib.suppress(SystemExit):
                server.run(sockets=[sock])

        self._thread = threading.Thread(target=serve, name="sandbox-server", daemon=True)
        self._thread.start()
        deadline = time.monotonic() + timeout
        while not server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                sock.close()
                error = getattr(self.app.state, "startup_error", None)
                if isinstance(error, Exception):
                    raise error  # the app's own reason (a database it cannot open, say)
                raise RuntimeError("the sandbox server did not start")
            time.sleep(0.01)
        return self

    def stop(self) -> None:
        """Stop serving and wait for the thread (and the app's background work) to end."""
        if self._server is not None:
            self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout=30)
        self._server = None
        self._thread = None

    def __enter__(self) -> SandboxServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def __repr__(self) -> str:
        return f"SandboxServer(base_url={self.base_url!r}, config={self.config!r})"
