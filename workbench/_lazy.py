"""A package's re-exports, each imported from its module when first asked for (PEP 562).

``import workbench`` then costs next to nothing, and ``workbench.Client`` imports the
client's modules only, not the result models (pydantic) nor the webhook receiver. The
package keeps the same imports under ``TYPE_CHECKING`` for type checkers and editors;
a test checks that the two lists agree.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from collections.abc import Mapping
from typing import Any

__all__ = ["LazyExports"]


class LazyExports:
    """The names a package re-exports from its modules, loaded on first access.

    Args:
        package: the package's ``__name__``.
        exports: module path -> the names re-exported from it.
    """

    def __init__(self, package: str, exports: Mapping[str, tuple[str, ...]]) -> None:
        self._package = package
        self.modules = {name: module for module, names in exports.items() for name in names}

    def load(self, name: str) -> Any:
        """The exported ``name``, imported from its module and kept on the package.

        A submodule's name gives the submodule, imported then: ``workbench.webhooks``
        after a bare ``import workbench`` worked when the package imported it eagerly.
        """
        module = self.modules.get(name)
        if module is None:
            submodule = f"{self._package}.{name}"
            if not name.startswith("__") and importlib.util.find_spec(submodule) is not None:
                return importlib.import_module(submodule)  # which sets it on the package
            raise AttributeError(f"module {self._package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        setattr(sys.modules[self._package], name, value)  # later lookups skip __getattr__
        return value

    def names(self, present: Mapping[str, Any]) -> list[str]:
        """What ``dir(package)`` lists: what it holds and what it re-exports."""
        return sorted(set(present) | set(self.modules))
