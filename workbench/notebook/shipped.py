"""The flow notebooks that ship with the package, and writable copies of them.

In an installed wheel they are package data, ``workbench/notebooks/``; in a checkout of
the repository they are its ``notebooks/`` folder, from which the wheel is built.
`workbench run` executes them where the current folder has none of its own, and
`workbench lab` opens JupyterLab on a copy (`copy_notebooks`), since the installed
files may be read-only and are replaced by the next upgrade.
"""

from __future__ import annotations

import importlib.resources
import shutil
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["CopyReport", "copy_notebooks", "discover", "shipped_folder", "shipped_notebooks"]


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


def copy_notebooks(target: Path) -> CopyReport:
    """Copy the shipped notebooks into ``target`` (created if missing), never overwriting.

    A notebook already in ``target`` is a reader's copy, maybe edited: it is kept as it
    is, and only the missing ones are written.

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
            with writer, source.open("rb") as reader:
                shutil.copyfileobj(reader, writer)
        except BaseException:
            destination.unlink(missing_ok=True)  # no half-written notebook left behind
            raise
        report.copied.append(destination)
    return report
