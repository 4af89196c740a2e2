"""Reading valgrind's callgrind dumps, for the benchmarks that count instructions."""

from __future__ import annotations

import time
from pathlib import Path

__all__ = ["totals"]


def totals(dump: Path) -> int:
    """The ``totals:`` line of a callgrind dump, waiting briefly for it to be written."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if dump.is_file():
            for line in dump.read_text().splitlines():
                if line.startswith("totals:"):
                    return int(line.split()[1])
        time.sleep(0.1)
    raise RuntimeError(f"callgrind wrote no totals to {dump}")
