"""Screenshots of the sandbox's dashboard for the guide (``docs/sandbox/dashboard.md``).

Starts a sandbox of its own (a temporary SQLite file) and a local webhook receiver that
answers 500 until it is "fixed", makes a merchant with a charge and a refund, and opens
the pages in the system's Chromium (``/usr/bin/chromium``, or ``WORKBENCH_CHROMIUM``;
never a downloaded browser) at phone width: an event whose first attempt failed and
whose resend was delivered, a payment with its timeline, and the clock after a day.
Writes ``docs/sandbox/dashboard/<page>.png`` and ``manifest.json`` (each picture's size
and smallest text, for the guide's picture test, as `tools.hosted_shots` does).

Usage: ``python -m tools.dashboard_shots [--out DIR] [--width PX]``
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx2

from tools.screenshots import SMALLEST_TEXT, png_size
from workbench import Client
from workbench.testing import running_sandbox

__all__ = ["PAGES", "main", "shoot"]

OUT = Path("docs/sandbox/dashboard")
CHROMIUM = Path(os.environ.get("WORKBENCH_CHROMIUM", "/usr/bin/chromium"))
#: The pictures, in the order the guide shows them.
PAGES = ("event", "payment", "clock")


@contextmanager
def _receiver() -> Iterator[dict[str, Any]]:
    """A webhook receiver answering ``state["status"]``; its address in ``state["url"]``."""
    state: dict[str, Any] = {"status": 500, "body": b"database is down"}

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length", "0")))
            self.send_response(state["status"])
            self.send_header("Content-Length", str(len(state["body"])))
            self.end_headers()
            self.wfile.write(state["body"])

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    state["url"] = f"http://127.0.0.1:{server.server_address[1]}/webhooks"
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()


def shoot(out: Path, width: int = 390, height: int = 844) -> list[Path]:
    """Take every page; returns the files written."""
    from playwright.sync_api import sync_playwright

    out.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    manifest: dict[str, dict[str, float]] = {}
    with (
        tempfile.TemporaryDirectory() as folder,
        running_sandbox(
            db_dir=Path(folder), run_reconciler_in_background=False, webhook_allow_private=True
        ) as server,
        _receiver() as receiver,
        sync_playwright() as playwright,
    ):
        made = httpx2.post(f"{server.base_url}/sandbox/merchants", json={"name": "Kitapçı"}).json()
        with Client(made["apiKey"], made["secretKey"], server.base_url) as client:
            client.sandbox.set_webhook(receiver["url"])
            charge = client.payments.charge_card(
                transaction_id="order-1042", amount=45_900, card_token="tok_test_success"
            )
            client.payments.refund(charge.payment_id, amount=5_000)
            client.sandbox.tick()
        browser = playwright.chromium.launch(
            executable_path=str(CHROMIUM), headless=True, args=["--no-sandbox"]
        )
        context = browser.new_context(viewport={"width": width, "height": height}, locale="en-US")
        page = context.new_page()
        page.goto(f"{server.base_url}/dashboard/sign-in")
        page.locator("#api_key").fill(made["apiKey"])
        page.locator("#secret_key").fill(made["secretKey"])
        page.locator("[data-testid=sign-in-form] button[type=submit]").click()
        page.wait_for_url(f"{server.base_url}/dashboard")

        def take(name: str) -> None:
            path = out / f"{name}.png"
            page.screenshot(path=str(path), full_page=True)
            width_px, height_px = png_size(path)
            smallest = float(page.evaluate(SMALLEST_TEXT, None))
            manifest[path.name] = {"width": width_px, "height": height_px, "smallestText": smallest}
            written.append(path)

        page.goto(f"{server.base_url}/dashboard/events?type=payment.captured")
        page.locator("[data-live=events] tbody a").first.click()
        receiver["status"], receiver["body"] = 200, b'{"received": true}'
        page.get_by_test_id("resend").click()
        page.wait_for_selector("[data-testid=resent]")
        take("event")
        page.goto(f"{server.base_url}/dashboard/payments/{charge.payment_id}")
        take("payment")
        page.goto(f"{server.base_url}/dashboard/clock")
        page.get_by_test_id("advance-day").click()
        page.wait_for_selector("[data-testid=moved]")
        take("clock")
        context.close()
        browser.close()
    (out / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n", "utf-8")
    return written


def main(argv: Sequence[str] | None = None) -> int:
    """Command line: write the screenshots, print their paths."""
    parser = argparse.ArgumentParser(prog="python -m tools.dashboard_shots", description=__doc__)
    parser.add_argument("--out", type=Path, default=OUT, help=f"folder (default {OUT})")
    parser.add_argument("--width", type=int, default=390, help="viewport width in px")
    args = parser.parse_args(argv)
    if not CHROMIUM.is_file():
        parser.error(f"{CHROMIUM} is missing: `make browser` installs it")
    for path in shoot(args.out, width=args.width):
        print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
