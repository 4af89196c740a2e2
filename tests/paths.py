"""Where the repository is: `ROOT`, the folder that holds ``pyproject.toml``.

Shared by the guide's tests (``tests/docs``) and the notebook tests (``tests/notebooks``),
which read the repository's own files (``docs/``, ``notebooks/``, ``mkdocs.yml``).
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["ROOT"]

ROOT = Path(__file__).resolve().parents[1]
