"""`share_bytecode` links a compiled module only for the very same source file."""

from __future__ import annotations

import os
import py_compile
import subprocess
import sys
from pathlib import Path

from .bytecode import SUFFIX, share_bytecode


def _package(site: Path, source: str) -> Path:
    folder = site / "pkg"
    folder.mkdir(parents=True)
    (folder / "__init__.py").write_text("", "utf-8")
    (folder / "mod.py").write_text(source, "utf-8")
    return folder


def test_only_the_same_files_compiled_modules_are_linked_and_python_runs_them(
    tmp_path: Path,
) -> None:
    donor = tmp_path / "donor"
    theirs = _package(donor, "ANSWER = 'shared'\n")
    for name in ("__init__.py", "mod.py"):
        py_compile.compile(str(theirs / name), doraise=True)
    (theirs / "other.py").write_text("X = 1\n", "utf-8")
    py_compile.compile(str(theirs / "other.py"), doraise=True)

    site = tmp_path / "site"
    ours = site / "pkg"
    ours.mkdir(parents=True)
    os.link(theirs / "__init__.py", ours / "__init__.py")
    os.link(theirs / "mod.py", ours / "mod.py")
    (ours / "other.py").write_text("X = 1\n", "utf-8")  # equal text, another file

    assert share_bytecode(site, [donor, tmp_path / "missing"]) == 2
    linked = ours / "__pycache__" / f"mod{SUFFIX}"
    assert os.path.samefile(linked, theirs / "__pycache__" / f"mod{SUFFIX}")
    assert not (ours / "__pycache__" / f"other{SUFFIX}").exists()
    assert share_bytecode(site, [donor]) == 0  # already there

    # Python reads the linked one: a .pyc it found stale it would replace (another file).
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    probe = "import pkg.mod as m; print(m.ANSWER, m.__file__)"
    ran = subprocess.run(
        [sys.executable, "-c", probe], cwd=site, env=env, capture_output=True, text=True
    )
    assert ran.stdout.split() == ["shared", str(ours / "mod.py")], ran.stderr
    assert os.path.samefile(linked, theirs / "__pycache__" / f"mod{SUFFIX}")
