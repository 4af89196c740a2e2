"""``workbench`` run in a process of its own, and which of the named modules it imported.

For the tests that a command leaves out what it does not need (``--help``, ``workbench
run``'s parent, ``workbench lab --version``): the process is new, so nothing the test
process imported counts.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Sequence
from typing import Any

__all__ = ["workbench_imports"]

#: argv[1]: the watched names as JSON; the rest: the command's arguments. The imported
#: ones are the last line of stderr, whatever the command ends with.
_PROBE = """
import json, sys
from workbench.cli import main
watched = json.loads(sys.argv[1])
try:
    main(sys.argv[2:])
finally:
    seen = sorted(m for m in sys.modules if any(m == w or m.startswith(w + ".") for w in watched))
    print(json.dumps(seen), file=sys.stderr)
"""


def workbench_imports(
    args: Sequence[str], watched: Sequence[str], **run: Any
) -> tuple[subprocess.CompletedProcess[str], list[str]]:
    """Run ``workbench ARGS``; its process, and the modules of ``watched`` (each a module
    and its submodules) that it imported. ``run`` goes to `subprocess.run`."""
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, json.dumps(list(watched)), *args],
        capture_output=True, text=True, check=False, **run,
    )  # fmt: skip
    lines = done.stderr.splitlines()
    imported: list[str] = json.loads(lines[-1]) if lines else []
    return done, imported
