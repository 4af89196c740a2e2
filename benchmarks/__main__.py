"""Run every benchmark in turn: ``uv run python -m benchmarks`` (``make bench``).

Each prints its figures as ratios against a baseline measured in the same run.
"""

from __future__ import annotations

import subprocess
import sys

MODULES = [
    "benchmarks.sandbox_charges",
    "benchmarks.charge_instructions",
    "benchmarks.sandbox_merchants",
    "benchmarks.client_overhead",
    "benchmarks.subscriptions_scale",
    "benchmarks.list_pages",
    "benchmarks.webhook_deliveries",
    "benchmarks.startup",
]


def main() -> int:
    status = 0
    for module in MODULES:
        print(f"== {module}", flush=True)
        status |= subprocess.run([sys.executable, "-m", module], check=False).returncode
    return status


if __name__ == "__main__":
    raise SystemExit(main())
