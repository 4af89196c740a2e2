"""Screenshots of the sandbox's hosted pages for the guide, taken from the real pages.

A fresh sandbox is started and driven with the client: a card checkout session, a TR QR
session, a card whose 3-D Secure challenge the buyer's browser reaches, and a buyer
portal's update-card session. Each page is opened in the system's Chromium at desktop
width (1280 px; the page's card, clipped, so the picture is shown at its own size) and at
phone width (390 px) and saved as ``docs/images/screenshots/<page>-<width>.png``.

``manifest.json`` beside them records, for each picture, its size and the smallest text
on it as Chromium drew it (CSS px, device scale 1): the guide's browser test divides the
size the guide shows a picture at by its own, and checks that text stays readable.

Run by ``make docs-gen`` (``python -m tools.docgen``); alone::

    .venv/bin/python -m tools.screenshots
"""

from __future__ import annotations

import json
import os
import struct
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workbench import Client
from workbench.testing import client_for, running_sandbox

if TYPE_CHECKING:
    from playwright.sync_api import FloatRect as Clip

__all__ = ["FOLDER", "PAGES", "SMALLEST_TEXT", "WIDTHS", "main", "png_size", "take"]

ROOT = Path(__file__).resolve().parents[1]
FOLDER = ROOT / "docs" / "images" / "screenshots"
CHROMIUM = Path(os.environ.get("WORKBENCH_CHROMIUM", "/usr/bin/chromium"))
#: Viewports: a desktop browser and a phone.
#: (A phone's picture is the whole page: the height only sets where a full page starts.)
WIDTHS = {"desktop": (1280, 800), "phone": (390, 300)}
#: The hosted pages shown, in the guide's order.
PAGES = ("checkout", "qr", "3ds", "update-card")
_CHALLENGE_CARD = "4000 0000 0000 3220"
#: The smallest text of a page, in CSS px as drawn, over its visible text.
SMALLEST_TEXT = """(clip) => {
  let smallest = 1e9;
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  while (walker.nextNode()) {
    const node = walker.currentNode;
    if (!node.textContent.trim()) continue;
    const element = node.parentElement;
    const style = getComputedStyle(element);
    if (style.visibility === 'hidden' || style.display === 'none') continue;
    const box = element.getBoundingClientRect();
    if (box.width === 0 || box.height === 0) continue;
    if (clip && (box.right <= clip.x || box.left >= clip.x + clip.width ||
                 box.bottom <= clip.y || box.top >= clip.y + clip.height)) continue;
    smallest = Math.min(smallest, parseFloat(style.fontSize));
  }
  return smallest;
}"""


@dataclass(frozen=True)
class Shot:
    """One saved picture: its file name, size and smallest text (CSS px, as drawn)."""

    name: str
    width: int
    height: int
    smallest_text: float


def png_size(path: Path) -> tuple[int, int]:
    """A PNG file's width and height, from its header."""
    head = path.read_bytes()[:24]
    if head[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError(f"{path} is not a PNG file")
    width, height = struct.unpack(">II", head[16:24])
    return int(width), int(height)


def _addresses(client: Client) -> dict[str, str]:
    """The address of each hosted page, from objects made on the sandbox."""
    base = client.base_url.rstrip("/")
    back = f"{base}/demo/merchant/return"
    fixtures = client.sandbox.fixtures()
    card = client.sessions.create(
        transaction_id="order-1001",
        amount=125_050,
        description="2 coffee mugs",
        installment_enabled=True,
        return_url=back,
    )
    qr = client.sessions.create(
        transaction_id="order-1002", amount=125_050, mode="qr", return_url=back
    )
    challenged = client.sessions.create(
        transaction_id="order-1003", amount=125_050, description="2 coffee mugs", return_url=back
    )
    sub = client.subscriptions.create(
        store_id=fixtures.store_id,
        customer_id="cus_demo_ayse",
        amount_minor=9_900,
        interval_count=1,
        interval_unit="month",
    )
    assert sub.public_hash
    update = client.portal.update_card_session(sub.public_hash)
    return {
        "checkout": card.checkout_url,
        "qr": qr.checkout_url,
        "3ds": challenged.checkout_url,  # the card form is filled in to reach the challenge
        "update-card": update.checkout_url,
    }


def _open(page: Any, name: str, address: str) -> None:
    page.goto(address, wait_until="networkidle")
    if name == "3ds":
        page.get_by_label("Card number").fill(_CHALLENGE_CARD)
        page.get_by_label("Expiry (MM/YY)").fill("12/30")
        page.get_by_label("Security code (CVC)").fill("123")
        page.get_by_label("Name on the card").fill("Ayşe Yılmaz")
        page.get_by_role("button", name="Pay").click()
        page.wait_for_url("**/sandbox/acs/**")
        page.wait_for_load_state("networkidle")


def _clip(page: Any) -> Clip | None:
    """The page's main card at desktop width (the rest is empty background)."""
    box = page.locator("main").first.bounding_box()
    if box is None:
        return None
    pad = 24
    clip: Clip = {
        "x": max(0.0, box["x"] - pad),
        "y": 0.0,
        "width": box["width"] + 2 * pad,
        "height": min(box["y"] + box["height"] + pad, 1600.0),
    }
    return clip


def take(folder: Path = FOLDER) -> list[Shot]:
    """Start a sandbox, open each hosted page at each width, save the pictures."""
    from playwright.sync_api import sync_playwright

    folder.mkdir(parents=True, exist_ok=True)
    shots: list[Shot] = []
    with (
        tempfile.TemporaryDirectory() as tmp,
        running_sandbox(db_dir=Path(tmp), run_reconciler_in_background=False) as server,
        client_for(server) as client,
        sync_playwright() as playwright,
    ):
        browser = playwright.chromium.launch(
            executable_path=str(CHROMIUM), headless=True, args=["--no-sandbox", "--disable-gpu"]
        )
        try:
            for width_name, (width, height) in WIDTHS.items():
                addresses = _addresses(client)  # fresh sessions: the 3-D Secure one is spent
                context = browser.new_context(
                    viewport={"width": width, "height": height},
                    color_scheme="light",
                    device_scale_factor=1,
                )
                page = context.new_page()
                for name in PAGES:
                    _open(page, name, addresses[name])
                    clip = _clip(page) if width_name == "desktop" else None
                    path = folder / f"{name}-{width_name}.png"
                    if clip is None:
                        page.screenshot(path=str(path), full_page=True)
                    else:
                        page.screenshot(path=str(path), clip=clip, full_page=True)
                    smallest = float(page.evaluate(SMALLEST_TEXT, clip))
                    shots.append(Shot(path.name, *png_size(path), smallest))
                context.close()
        finally:
            browser.close()
    manifest = {s.name: {"width": s.width, "height": s.height, "smallestText": s.smallest_text}
                for s in shots}  # fmt: skip
    (folder / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n", "utf-8")
    return shots


def main(folder: Path = FOLDER) -> int:
    """Take the screenshots into ``folder``; print what was saved."""
    if not CHROMIUM.is_file():
        print(f"screenshots not taken: {CHROMIUM} is missing (`make browser` installs it)")
        return 1
    for shot in take(folder):
        print(f"wrote {folder / shot.name} ({shot.width}x{shot.height})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
