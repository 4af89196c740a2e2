"""What ``workbench run`` writes for CI besides its table: JUnit XML and a JSON summary.

One JUnit test case per notebook (``classname`` ``notebooks``, ``name`` the notebook's
stem): a failed notebook carries a ``<failure>`` with its first error line, a skipped one
a ``<skipped>`` with the reason. The JSON summary holds the same per flow, the counts and
the exit status the command ends with. Neither holds anything the printed table does not.
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from workbench.notebook.runner import FlowResult

__all__ = ["exit_status", "json_summary", "junit_xml", "outcome", "write_json"]

#: The name of the suite.
SUITE = "workbench run"
#: Terminal colour codes (IPython colours the error line) and the other control
#: characters XML 1.0 cannot hold.
_UNPRINTABLE = re.compile(r"\x1b\[[0-9;]*[A-Za-z]|[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def _plain(text: str | None) -> str | None:
    """``text`` without colour codes and control characters."""
    return None if text is None else _UNPRINTABLE.sub("", text)


def outcome(result: FlowResult) -> str:
    """``passed``, ``failed`` or ``skipped``."""
    if result.skipped:
        return "skipped"
    return "passed" if result.passed else "failed"


def exit_status(results: Sequence[FlowResult]) -> int:
    """0 when every notebook that ran passed and at least one ran; 1 otherwise."""
    ran = [r for r in results if not r.skipped]
    return 0 if ran and all(r.passed for r in ran) else 1


def _counts(results: Sequence[FlowResult]) -> dict[str, int]:
    words = [outcome(r) for r in results]
    return {word: words.count(word) for word in ("passed", "failed", "skipped")}


def _iso(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def junit_xml(results: Sequence[FlowResult], *, started: datetime) -> bytes:
    """The results as a JUnit XML document (the schema Jenkins, GitLab and GitHub read).

    Args:
        results: one per notebook, in the order they ran.
        started: when the run began (aware), the suite's ``timestamp``.
    """
    counts = _counts(results)
    seconds = f"{sum(r.seconds for r in results):.3f}"
    attributes = {
        "name": SUITE,
        "tests": str(len(results)),
        "failures": str(counts["failed"]),
        "errors": "0",
        "skipped": str(counts["skipped"]),
        "time": seconds,
    }
    root = ET.Element("testsuites", attributes)
    suite = ET.SubElement(root, "testsuite", {**attributes, "timestamp": _iso(started)})
    for result in results:
        case = ET.SubElement(
            suite,
            "testcase",
            {
                "classname": "notebooks",
                "name": result.name,
                "file": result.source.as_posix(),
                "time": f"{result.seconds:.3f}",
            },
        )
        if result.skipped:
            ET.SubElement(case, "skipped", {"message": _plain(result.skipped) or ""})
        elif not result.passed:
            error = _plain(result.error) or "failed"
            failure = ET.SubElement(case, "failure", {"message": error, "type": "CellError"})
            if result.executed is not None:
                failure.text = f"{error}\nExecuted notebook: {result.executed.as_posix()}"
            else:
                failure.text = error
    ET.indent(root)
    document: bytes = ET.tostring(root, encoding="utf-8", xml_declaration=True)
    return document + b"\n"


def json_summary(
    results: Sequence[FlowResult], *, started: datetime, base_url: str, external: bool
) -> dict[str, Any]:
    """The results as a JSON-ready summary (camelCase keys, like the service's bodies).

    Args:
        results: one per notebook, in the order they ran.
        started: when the run began (aware).
        base_url: where the notebooks sent their requests.
        external: whether that was a service given with ``--external``.
    """
    return {
        "startedAt": _iso(started),
        "baseUrl": base_url,
        "sandbox": "external" if external else "embedded",
        **_counts(results),
        "seconds": round(sum(r.seconds for r in results), 3),
        "exitStatus": exit_status(results),
        "flows": [
            {
                "name": r.name,
                "notebook": r.source.as_posix(),
                "result": outcome(r),
                "seconds": round(r.seconds, 3),
                "error": _plain(r.error),
                "skipReason": _plain(r.skipped),
                "executed": r.executed.as_posix() if r.executed else None,
            }
            for r in results
        ],
    }


def write_json(summary: dict[str, Any], path: Path) -> None:
    """Write ``summary`` to ``path`` (indented, a newline at the end)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
