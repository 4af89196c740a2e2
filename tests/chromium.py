"""The system's Chromium under Playwright, and loopback HTTP servers for it to visit.

Shared by the hosted-page tests (``tests/browser``) and the guide's browser checks
(``tests/docs``). Chromium is the operating system's package, launched by its path;
Playwright never downloads a browser. Where it is missing the caller's tests skip,
printing why.

The tests prefer Debian's ``chromium-headless-shell``: the same Chromium's engine
without the desktop browser around it, as Playwright's own headless Chromium is. Here
it spends about half the CPU the desktop browser does: one renderer process per new tab
instead of up to three, and a browser process with no desktop browser's services to run.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Iterator
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

HEADLESS_SHELL = Path("/usr/bin/chromium-headless-shell")
CHROMIUM = Path(
    os.environ.get(
        "WORKBENCH_CHROMIUM",
        HEADLESS_SHELL if HEADLESS_SHELL.is_file() else "/usr/bin/chromium",
    )
)
CHROMIUM_ARGS = [
    "--headless",
    # The desktop browser's own; the headless shell sends no Accept-Language otherwise.
    "--accept-lang=en-US,en;q=0.9",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


@contextlib.contextmanager
def chromium(what: str, *args: str) -> Iterator[Any]:
    """A headless Chromium browser, launched with `CHROMIUM_ARGS` and ``args``; skips
    ``what`` (printing why) when none is installed."""
    if not CHROMIUM.is_file():
        reason = f"{CHROMIUM} is missing: `make browser` installs it from the system packages"
        print(f"skipping {what}: {reason}")
        pytest.skip(reason)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=str(CHROMIUM), headless=True, args=[*CHROMIUM_ARGS, *args]
        )
        try:
            yield browser
        finally:
            browser.close()


@contextlib.contextmanager
def serving(server: ThreadingHTTPServer) -> Iterator[int]:
    """Serve ``server`` from a thread; yields its port; shuts it down afterwards."""
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


class QuietFileHandler(SimpleHTTPRequestHandler):
    """Serves a folder's files, logging nothing: ``partial(QuietFileHandler, directory=...)``."""

    def log_message(self, format: str, *args: Any) -> None:
        pass
