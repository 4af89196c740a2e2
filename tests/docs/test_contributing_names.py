"""The contributing pages name files and functions that exist.

The "adding an endpoint" recipe lists the files a new route touches, each of which
registers capture (the example it points at); the internals page follows a card charge
stop by stop, naming the module and function of each. Both are read from the pages, so
a file that moves or a function renamed fails here rather than leaving the guide wrong.
"""

from __future__ import annotations

import importlib
import re
from types import ModuleType

from tests.paths import ROOT

CONTRIBUTING = ROOT / "docs" / "contributing"
#: The feature the recipe's ``<feature>`` stands for in its example, capture.
FEATURE = "payments"
CODE = re.compile(r"`([^`\n]+)`")
#: A name the pages give as ``module.attribute``: dotted, no spaces or calls.
DOTTED = re.compile(r"^[A-Za-z_][\w]*(\.[A-Za-z_]\w*)+$")
#: Where a dotted name's first part is looked for, in this order.
PACKAGES = ("workbench.sandbox", "workbench", "workbench.spec")


def _section(page: str, title: str) -> str:
    text = (CONTRIBUTING / page).read_text(encoding="utf-8")
    start = text.index(f"\n## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start : end if end != -1 else len(text)]


def _recipe_paths() -> list[str]:
    section = _section("index.md", "Adding an endpoint")
    return [
        span.replace("<feature>", FEATURE)
        for span in CODE.findall(section)
        if span.split("/")[0] in ("workbench", "docs", "tests") and "/" in span
    ]


def _listed_paths() -> list[str]:
    """The recipe's numbered list: the file each item starts with."""
    section = _section("index.md", "Adding an endpoint")
    items = re.findall(r"^\d+\. `([^`]+)`", section, re.MULTILINE)
    return [item.replace("<feature>", FEATURE) for item in items]


def test_every_file_the_endpoint_recipe_names_exists() -> None:
    paths = _recipe_paths()
    assert len(paths) >= 13, paths
    missing = [path for path in paths if not (ROOT / path).exists()]
    assert missing == []


def test_every_file_of_the_recipes_list_registers_capture() -> None:
    paths = _listed_paths()
    assert len(paths) == 13, paths
    silent = []
    for path in paths:
        target = ROOT / path
        files = sorted(target.rglob("*.py")) if target.is_dir() else [target]
        if not any("capture" in f.read_text(encoding="utf-8").lower() for f in files):
            silent.append(path)
    assert silent == []


def _module(dotted: str) -> tuple[ModuleType, list[str]] | None:
    """The longest importable module that ``dotted`` starts with, and the rest."""
    parts = dotted.split(".")
    for package in PACKAGES:
        for cut in range(len(parts), 0, -1):
            name = ".".join([package, *parts[:cut]])
            try:
                return importlib.import_module(name), parts[cut:]
            except ModuleNotFoundError as exc:
                if exc.name is None or not name.startswith(exc.name):
                    raise
    return None


def _charge_stop_names() -> list[str]:
    section = _section("internals.md", "A card charge, stop by stop")
    stops = section[section.index("\n1. ") :]
    return [span for span in CODE.findall(stops) if DOTTED.match(span)]


def _resolve(target: object, attributes: list[str]) -> bool:
    for attribute in attributes:
        if not hasattr(target, attribute):
            return False
        target = getattr(target, attribute)
    return True


def test_every_module_and_function_on_the_charges_path_exists() -> None:
    """A name is a module's path (``edge.signature``, ``storage.Database.atransact``),
    or an attribute of a module named before it (``SignatureCheck.__call__``)."""
    named: list[ModuleType] = []
    checked, unknown = [], []
    for dotted in _charge_stop_names():
        found = _module(dotted)
        if found is not None:
            module, rest = found
            named.insert(0, module)
        else:
            first, *others = dotted.split(".")
            holders = [m for m in named if hasattr(m, first)]
            if not holders:  # a framework's name (`FastAPI.__call__`)
                continue
            module, rest = holders[0], [first, *others]
        (checked if _resolve(module, rest) else unknown).append(dotted)
    assert unknown == []
    assert len(checked) >= 60, checked
