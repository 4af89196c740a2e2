"""Screenshots of the pages a browser test passes through, for review (`Shots`).

Saved as ``artifacts/screenshots/<test>-NN-<step>.png``; nothing compares them.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

__all__ = ["SCREENSHOTS", "Shots"]

SCREENSHOTS = Path(__file__).resolve().parents[2] / "artifacts" / "screenshots"


class Shots:
    """Saves a screenshot of each page a test passes through (reviewed, not compared)."""

    def __init__(self, name: str) -> None:
        self.name = re.sub(r"[^A-Za-z0-9_-]+", "-", name).strip("-")
        self.count = 0

    def __call__(self, page: Any, step: str) -> Path:
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        self.count += 1
        path = SCREENSHOTS / f"{self.name}-{self.count:02d}-{step}.png"
        page.screenshot(path=str(path), full_page=True)
        return path
