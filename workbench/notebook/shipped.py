"""The flow notebooks that ship with the package, and writable copies of them.

In an installed wheel they are package data, ``workbench/notebooks/``; in a checkout of
the repository they are its ``notebooks/`` folder, from which the wheel is built.
`workbench run` executes them where the current folder has none of its own, and
`workbench lab` opens JupyterLab on a copy (`copy_notebooks`), since the installed
files may be read-only and are replaced by the next upgrade.

The notebooks are written for a clone, read in JupyterLab and on the guide's pages: they
say ``make lab`` and link to guide pages by paths relative to the built guide. A copy
made in another folder has neither a Makefile nor the guide beside it, so `for_a_copy`
rewrites what the reader is told there: ``workbench lab``, and each guide page's address
at `GUIDE_SOURCE`.
"""

from __future__ import annotations

import importlib.resources
import re
from dataclasses import dataclass, field
from pathlib import Path

__all__ = [
    "GUIDE_SOURCE",
    "CopyReport",
    "copy_notebooks",
    "discover",
    "for_a_copy",
    "shipped_folder",
    "shipped_notebooks",
]

#: The guide's pages as published with the project (``Documentation`` in pyproject.toml),
#: each a Markdown file: ``concepts/state-machines/`` is ``concepts/state-machines.md``.
GUIDE_SOURCE = "https://github.com/payments-workbench/payments-workbench/blob/main/docs/"
#: A link from a notebook's page of the guide (``notebooks/<name>/``) to another page.
_GUIDE_LINK = re.compile(r"\]\(\.\./\.\./((?:[a-z0-9-]+/)*[a-z0-9-]+)/(#[a-z0-9-]+)?\)")
#: ``make lab`` in a sentence or in a form's stored one-line summary.
_MAKE_LAB = re.compile(r"\bmake lab\b")


def shipped_folder() -> Path | None:
    """The folder of the shipped notebooks, or ``None`` when this install has none."""
    packaged = importlib.resources.files("workbench") / "notebooks"
    if isinstance(packaged, Path) and packaged.is_dir():
        return packaged
    checkout = Path(__file__).resolve().parents[2]
    if (checkout / "pyproject.toml").is_file() and (checkout / "notebooks").is_dir():
        return checkout / "notebooks"  # a checkout of the repository (an editable install)
    return None


def discover(folder: Path) -> list[Path]:
    """The flow notebooks in ``folder``, in file-name order (leading numbers set the order).

    Here rather than beside the runner, so that ``workbench lab`` finds a reader's copies
    without importing nbformat (whose JSON Schema formats take seconds to load).
    """
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.glob("*.ipynb") if not p.name.startswith(("_", ".")))


def shipped_notebooks() -> list[Path]:
    """The shipped flow notebooks in file-name order (empty when there are none)."""
    folder = shipped_folder()
    return [] if folder is None else discover(folder)


@dataclass
class CopyReport:
    """What `copy_notebooks` did.

    Attributes:
        copied: the notebooks written into the folder.
        kept: the notebooks the folder had already, left as they were.
    """

    copied: list[Path] = field(default_factory=list)
    kept: list[Path] = field(default_factory=list)


def for_a_copy(text: str) -> str:
    """A notebook's JSON text as a copy outside the clone tells it: ``workbench lab`` for
    ``make lab``, and the guide's pages at `GUIDE_SOURCE` for links relative to the guide.

    Only prose and stored outputs say either; the code the cells run is left as it is.
    """
    text = _MAKE_LAB.sub("workbench lab", text)
    return _GUIDE_LINK.sub(lambda m: f"]({GUIDE_SOURCE}{m[1]}.md{m[2] or ''})", text)


def copy_notebooks(target: Path) -> CopyReport:
    """Copy the shipped notebooks into ``target`` (created if missing), never overwriting.

    A notebook already in ``target`` is a reader's copy, maybe edited: it is kept as it
    is, and only the missing ones are written, each rewritten by `for_a_copy`.

    Raises:
        FileNotFoundError: this install ships no notebooks.
        OSError: ``target`` cannot be created or written.
    """
    sources = shipped_notebooks()
    if not sources:
        raise FileNotFoundError("this install of payments-workbench ships no notebooks")
    target.mkdir(parents=True, exist_ok=True)
    report = CopyReport()
    for source in sources:
        destination = target / source.name
        try:
            writer = destination.open("xb")
        except FileExistsError:
            report.kept.append(destination)
            continue
        try:
            with writer:
                writer.write(for_a_copy(source.read_text(encoding="utf-8")).encode("utf-8"))
        except BaseException:
            destination.unlink(missing_ok=True)  # no half-written notebook left behind
            raise
        report.copied.append(destination)
    return report
