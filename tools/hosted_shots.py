"""Screenshots of the hosted pages, in Turkish and English, for the guide (``make docs-gen``).

Starts a sandbox of its own (a temporary SQLite file), opens each page the buyer can
see in the system's Chromium (``/usr/bin/chromium``, or ``WORKBENCH_CHROMIUM``; never a
downloaded browser) at phone width, once per language, and writes
``docs/sandbox/hosted-pages/<page>-<lang>.png``. The pages are the real ones: a card
checkout with installments, the same page refusing a card number, TR QR, card update,
the 3-D Secure challenge, the merchant return page after a decline, and an expired
checkout. ``docs/sandbox/hosted-pages.md`` shows them; run this after changing a page.
``manifest.json`` beside them records each picture's size and smallest text, as
`tools.screenshots` does for Home's pictures, for the guide's picture test.

Usage: ``python -m tools.hosted_shots [--out DIR] [--width PX]``
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from tools.screenshots import SMALLEST_TEXT, png_size
from workbench import Client
from workbench.sandbox import DEMO_STORE_ID
from workbench.sandbox.merchant_return import RETURN_PATH
from workbench.spec import limits
from workbench.testing import client_for, running_sandbox

__all__ = ["LANGUAGES", "PAGES", "main", "shoot"]

OUT = Path("docs/sandbox/hosted-pages")
CHROMIUM = Path(os.environ.get("WORKBENCH_CHROMIUM", "/usr/bin/chromium"))
#: The browser's locale per language (what sets its ``Accept-Language``).
LANGUAGES = {"tr": "tr-TR", "en": "en-US"}
#: The pages, in the order the guide shows them.
PAGES = ("checkout", "refused", "qr", "card-update", "challenge", "declined", "expired")
_LABELS = {
    "tr": ("Kart numarası", "Son kullanma tarihi (AA/YY)", "Güvenlik kodu (CVC)",
           "Kart üzerindeki isim"),
    "en": ("Card number", "Expiry (MM/YY)", "Security code (CVC)", "Name on the card"),
}  # fmt: skip


def _fill(page: Any, lang: str, number: str) -> None:
    for label, value in zip(_LABELS[lang], (number, "12/30", "123", "Ayşe Yılmaz"), strict=True):
        page.get_by_label(label).fill(value)
    page.get_by_label(_LABELS[lang][3]).press("Enter")
    page.wait_for_load_state()


def _session(client: Client, **extra: Any) -> str:
    fields: dict[str, Any] = {"amount": 123_456, "description": "Kitap siparişi #42",
                              "return_url": f"{client.base_url}{RETURN_PATH}", **extra}  # fmt: skip
    return client.sessions.create(transaction_id=os.urandom(8).hex(), **fields).checkout_url


def _steps(client: Client) -> dict[str, Callable[[Any, str], None]]:
    """How to reach each page, given a fresh page of a browser in ``lang``."""

    def checkout(page: Any, lang: str) -> None:
        page.goto(_session(client, installment_enabled=True))

    def refused(page: Any, lang: str) -> None:
        page.goto(_session(client))
        _fill(page, lang, "4242 4242 4242 4241")

    def qr(page: Any, lang: str) -> None:
        page.goto(_session(client, mode="qr", amount=34_900))

    def card_update(page: Any, lang: str) -> None:
        subscription = client.subscriptions.create(
            store_id=DEMO_STORE_ID, customer_id="cus_demo_ayse", amount_minor=19_900,
            interval_count=1, interval_unit="month",
        )  # fmt: skip
        assert subscription.public_hash is not None
        page.goto(client.portal.update_card_session(subscription.public_hash).checkout_url)

    def challenge(page: Any, lang: str) -> None:
        page.goto(_session(client))
        _fill(page, lang, "4000 0000 0000 3220")
        page.wait_for_url("**/sandbox/acs/**")

    def declined(page: Any, lang: str) -> None:
        page.goto(_session(client))
        _fill(page, lang, "4000 0000 0000 0002")
        page.wait_for_url(f"**{RETURN_PATH}?*")

    def expired(page: Any, lang: str) -> None:
        url = _session(client)
        client.sandbox.advance_clock(limits.SESSION_LIFETIME_SECONDS + 1)
        page.goto(url)

    return {"checkout": checkout, "refused": refused, "qr": qr, "card-update": card_update,
            "challenge": challenge, "declined": declined, "expired": expired}  # fmt: skip


def shoot(out: Path, width: int = 390, height: int = 844) -> list[Path]:
    """Take every page in every language; returns the files written."""
    from playwright.sync_api import sync_playwright

    out.mkdir(parents=True, exist_ok=True)
    written = []
    manifest: dict[str, dict[str, float]] = {}
    with (
        tempfile.TemporaryDirectory() as folder,
        running_sandbox(db_dir=Path(folder), run_reconciler_in_background=False) as server,
        client_for(server) as client,
        sync_playwright() as playwright,
    ):
        browser = playwright.chromium.launch(
            executable_path=str(CHROMIUM), headless=True, args=["--no-sandbox"]
        )
        steps = _steps(client)
        for name in PAGES:  # "expired" moves the clock: it comes last
            for lang, locale in LANGUAGES.items():
                context = browser.new_context(
                    viewport={"width": width, "height": height}, locale=locale
                )
                page = context.new_page()
                steps[name](page, lang)
                path = out / f"{name}-{lang}.png"
                page.screenshot(path=str(path), full_page=True)
                width_px, height_px = png_size(path)
                smallest = float(page.evaluate(SMALLEST_TEXT, None))
                manifest[path.name] = {
                    "width": width_px, "height": height_px, "smallestText": smallest
                }  # fmt: skip
                written.append(path)
                context.close()
        browser.close()
    (out / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n", "utf-8")
    return written


def main(argv: Sequence[str] | None = None) -> int:
    """Command line: write the screenshots, print their paths."""
    parser = argparse.ArgumentParser(prog="python -m tools.hosted_shots", description=__doc__)
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
