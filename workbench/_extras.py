"""The package's extras: which modules each brings, and what to install when one is missing.

The core install (``pip install payments-workbench``) is the signed client, webhook
verification, configuration and the commands that need nothing else (``workbench sign``,
``workbench listen``). The sandbox, PostgreSQL, the notebooks and the pytest plugin come
with extras (``pip install 'payments-workbench[sandbox]'``); a command or API whose extra
is missing says which one to install instead of failing on an import.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Iterable

__all__ = [
    "DISTRIBUTION",
    "EXTRAS",
    "MissingExtraError",
    "extra_for_module",
    "install_command",
    "missing_extras",
    "require",
]

#: The name ``pip install`` knows the package by.
DISTRIBUTION = "payments-workbench"

#: Each extra, with the top-level modules it installs that the package imports
#: (an extra counts as installed when every one of them can be found).
EXTRAS: dict[str, tuple[str, ...]] = {
    "sandbox": (
        "fastapi",
        "fastapi_offline",
        "uvicorn",
        "httptools",
        "sqlalchemy",
        "jinja2",
        "segno",
        "platformdirs",
        "ada_url",
    ),
    "postgres": ("psycopg",),
    "notebooks": ("pandas", "ipywidgets", "ipykernel", "nbclient", "nbformat", "jupyterlab"),
    "testing": ("pytest", "yaml"),
    "tracing": ("opentelemetry",),
}

#: Modules an extra's packages import under a name of their own (a failed import names them).
_ALSO: dict[str, str] = {
    "starlette": "sandbox",
    "psycopg_binary": "postgres",
    "psycopg_c": "postgres",
    "IPython": "notebooks",
    "traitlets": "notebooks",
    "jupyter_client": "notebooks",
    "numpy": "notebooks",
}


class MissingExtraError(ModuleNotFoundError):
    """Something needs an extra that is not installed; the message says what to install.

    Attributes:
        extras: the extras to install, in the order of `EXTRAS`.
    """

    def __init__(self, what: str, extras: Iterable[str]) -> None:
        self.extras = _ordered(extras)
        names = ",".join(self.extras)
        noun = "extra" if len(self.extras) == 1 else "extras"
        super().__init__(
            f"{what} needs the [{names}] {noun} of {DISTRIBUTION}, not installed here. "
            f"Install with: {install_command(self.extras)}"
        )


def _ordered(extras: Iterable[str]) -> tuple[str, ...]:
    wanted = set(extras)
    unknown = wanted - EXTRAS.keys()
    if unknown:
        raise ValueError(f"no such extra: {', '.join(sorted(unknown))}")
    return tuple(name for name in EXTRAS if name in wanted)


def _found(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # a parent that fails to import; a broken __spec__
        return False


def missing_extras(*extras: str) -> tuple[str, ...]:
    """Those of ``extras`` that are not installed (some module of theirs cannot be found)."""
    return tuple(name for name in _ordered(extras) if not all(map(_found, EXTRAS[name])))


def install_command(extras: Iterable[str]) -> str:
    """The command that installs ``extras``: ``pip install 'payments-workbench[a,b]'``."""
    return f"pip install '{DISTRIBUTION}[{','.join(_ordered(extras))}]'"


def extra_for_module(name: str) -> str | None:
    """The extra that installs the module ``name`` (a dotted name counts by its top level)."""
    top = name.partition(".")[0]
    for extra, modules in EXTRAS.items():
        if top in modules:
            return extra
    return _ALSO.get(top)


def require(what: str, *extras: str) -> None:
    """Raise `MissingExtraError` naming every one of ``extras`` not installed.

    Args:
        what: what needs them, for the message (``"workbench sandbox"``).
        *extras: the extras it needs.

    Raises:
        MissingExtraError: some are missing.
    """
    missing = missing_extras(*extras)
    if missing:
        raise MissingExtraError(what, missing)
