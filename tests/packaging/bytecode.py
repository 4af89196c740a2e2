"""Compiled modules shared between environments that hold the same source files.

uv installs a package by hard-linking each of its files from its cache, so two
environments with the same version of a package (this checkout's and a new one, or two
new ones) hold the very same file (one inode) at each of its paths. The first Python to
import a module compiles it into ``__pycache__`` beside it; every other environment
would compile the same file again on its first import: most of a new environment's first
run (2.6 of the 4.4 CPU-s of the first ``workbench run`` in ``[sandbox,notebooks]``).

`share_bytecode` hard-links into a new environment each ``.pyc`` that another one holds
for the same file. Python reads one only after checking the source's modification time
and size against the ``.pyc``'s header (the same file: equal) and fixes its code's file
name to the path it imported from; a ``.pyc`` it finds stale it replaces (a new file,
never a write into the linked one). A module so imported runs the same code as one
compiled there.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable
from pathlib import Path

#: A compiled module's suffix for this Python (``.cpython-311.pyc``); the new environments
#: run this interpreter (``uv venv --python sys.executable``).
SUFFIX = f".{sys.implementation.cache_tag}.pyc"


def site_packages(environment: Path) -> Path:
    """Where a virtual environment of this Python installs packages."""
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    return environment / "lib" / version / "site-packages"


def share_bytecode(site: Path, donors: Iterable[Path]) -> int:
    """Link into ``site`` each donor's ``.pyc`` of a file the two share; how many."""
    linked = 0
    pending: list[tuple[Path, list[Path]]] = [(site, [d for d in donors if d.is_dir()])]
    while pending:
        here, theirs = pending.pop()
        names = {entry.name: entry for entry in os.scandir(here)}
        for there in theirs:
            linked += _link_compiled(here, there, names)
        for name, entry in names.items():
            if name != "__pycache__" and entry.is_dir(follow_symlinks=False):
                deeper = [there / name for there in theirs if (there / name).is_dir()]
                if deeper:
                    pending.append((here / name, deeper))
    return linked


def _link_compiled(here: Path, there: Path, names: dict[str, os.DirEntry[str]]) -> int:
    """Link ``there``'s compiled modules whose source is the same file in ``here``."""
    try:
        compiled = [e for e in os.scandir(there / "__pycache__") if e.name.endswith(SUFFIX)]
    except FileNotFoundError:
        return 0
    cache = here / "__pycache__"
    linked = 0
    for pyc in compiled:
        source = pyc.name.removesuffix(SUFFIX) + ".py"
        if source not in names or (cache / pyc.name).exists():
            continue
        try:
            same = os.path.samestat(names[source].stat(), (there / source).stat())
        except FileNotFoundError:
            continue
        if same:
            cache.mkdir(exist_ok=True)
            try:
                os.link(pyc.path, cache / pyc.name)
            except OSError:  # compiled there meanwhile, or a link too many: compiled on use
                continue
            linked += 1
    return linked
