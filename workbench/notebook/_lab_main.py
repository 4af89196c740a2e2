"""JupyterLab's own command (``python -m jupyterlab``), without jsonschema's IRI parsers.

``workbench lab`` starts JupyterLab as ``python -m workbench.notebook._lab_main``:
`workbench.notebook._no_iri` first (JupyterLab's server imports jsonschema, whose "iri"
format checker compiles grammars nothing here uses: ``python -m jupyterlab --version``
took 2.2 s of CPU with them, 1.0 s without), then JupyterLab exactly as ``python -m
jupyterlab`` runs it, with the same arguments.
"""

from __future__ import annotations

import runpy

import workbench.notebook._no_iri  # noqa: F401  (before JupyterLab imports jsonschema)

__all__: list[str] = []

if __name__ == "__main__":
    runpy.run_module("jupyterlab", run_name="__main__", alter_sys=True)
