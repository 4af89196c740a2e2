"""An import-linter contract for cycles module by module, package ``__init__`` modules included.

import-linter's own ``acyclic_siblings`` looks at the children of each package, each
child taken with everything below it; a package's ``__init__`` module is none of its
children, so a cycle through one goes unseen: ``pkg.a`` importing ``pkg`` (whose
``__init__`` imports ``pkg.a``), or a module importing ``workbench.sandbox`` while that
package's ``__init__`` imports the app that imports the module. `AcyclicModulesContract`
takes every module as itself and refuses any cycle of direct imports among the modules
of its packages (imports under ``TYPE_CHECKING`` count unless the session leaves them
out). Registered in ``pyproject.toml`` (``contract_types``); ``lint-imports`` runs it.
"""

from __future__ import annotations

from collections import deque
from itertools import pairwise
from typing import Any

import grimp
from importlinter import Contract, ContractCheck, fields, output

__all__ = ["AcyclicModulesContract", "cycles"]


def _strongly_connected(graph: grimp.ImportGraph, modules: set[str]) -> list[set[str]]:
    """The groups of ``modules`` that import each other in a ring (Tarjan, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[set[str]] = []

    def edges(module: str) -> list[str]:
        return sorted(graph.find_modules_directly_imported_by(module) & modules)

    for root in sorted(modules):
        if root in index:
            continue
        work: list[tuple[str, list[str]]] = [(root, edges(root))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            module, pending = work[-1]
            if pending:
                nxt = pending.pop()
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, edges(nxt)))
                elif nxt in on_stack:
                    low[module] = min(low[module], index[nxt])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[module])
            if low[module] == index[module]:
                group: set[str] = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.add(member)
                    if member == module:
                        break
                if len(group) > 1:
                    groups.append(group)
    return groups


def _ring(graph: grimp.ImportGraph, group: set[str]) -> list[str]:
    """One shortest cycle through the group's first module, as the modules in order."""
    start = min(group)
    came_from: dict[str, str] = {}
    queue = deque([start])
    while queue:
        module = queue.popleft()
        for nxt in sorted(graph.find_modules_directly_imported_by(module) & group):
            if nxt == start:
                path = [module]
                while path[-1] != start:
                    path.append(came_from[path[-1]])
                return [*reversed(path), start]
            if nxt not in came_from:
                came_from[nxt] = module
                queue.append(nxt)
    raise AssertionError(f"{start} is in an import cycle but none returns to it")


def cycles(graph: grimp.ImportGraph, packages: list[str]) -> list[list[str]]:
    """One cycle of direct imports per ring of modules of ``packages``, shortest first.

    Args:
        graph: the import graph.
        packages: the packages whose modules (theirs and their descendants') are looked at.

    Returns:
        Each cycle as a list of modules that starts and ends with the same module.
    """
    modules: set[str] = set()
    for package in packages:
        modules |= {package, *graph.find_descendants(package)}
    rings = [_ring(graph, group) for group in _strongly_connected(graph, modules)]
    return sorted(rings, key=lambda ring: (len(ring), ring))


class AcyclicModulesContract(Contract):
    """No module of ``packages`` reaches itself through direct imports.

    Configuration options:
        - packages: the packages whose modules are checked (every descendant too).
    """

    type_name = "acyclic_modules"

    packages = fields.ListField(subfield=fields.StringField())

    def check(self, graph: grimp.ImportGraph, verbose: bool) -> ContractCheck:
        """Find the cycles; each goes into the metadata with its imports' line numbers."""
        packages: list[str] = self.packages  # type: ignore[assignment]
        found = cycles(graph, packages)
        rendered: list[list[tuple[str, str, list[Any]]]] = []
        for ring in found:
            steps = []
            for importer, imported in pairwise(ring):
                details = graph.get_import_details(importer=importer, imported=imported)
                lines = [(d["line_number"], d["line_contents"]) for d in details]
                steps.append((importer, imported, lines))
            rendered.append(steps)
        return ContractCheck(kept=not found, metadata={"cycles": rendered})

    def render_broken_contract(self, check: ContractCheck) -> None:
        """Each cycle, one import per line: importer, line number, the import statement."""
        for steps in check.metadata["cycles"]:
            output.print_error(f"Import cycle of {len(steps)} modules:")
            output.new_line()
            for importer, imported, lines in steps:
                where = ", ".join(f"l.{number} {text}" for number, text in lines)
                output.print_error(f"- {importer} -> {imported} ({where})", bold=False)
            output.new_line()
