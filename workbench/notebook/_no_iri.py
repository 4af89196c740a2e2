"""jsonschema without its "iri" format checker, in a process that reads notebooks.

Where ``rfc3987_syntax`` is installed (JupyterLab's dependencies bring it), jsonschema
imports it for the "iri" format, and its import compiles some twenty Earley grammars:
about 2 s of CPU in every process that imports nbformat, whose validation checks no
format. This module, imported before nbformat, leaves it out unless something in the
process imported jsonschema already. `workbench.notebook.runner` imports it (``workbench
run``), and `workbench.notebook._lab_main` (JupyterLab's process under ``workbench lab``);
the test suite's root conftest.py does the same before it loads nbval's plugin.
"""

from __future__ import annotations

import sys

__all__: list[str] = []

if "jsonschema" not in sys.modules:
    # None in sys.modules: ``import rfc3987_syntax`` raises ImportError, which jsonschema
    # expects of a package that is not installed.
    sys.modules.setdefault("rfc3987_syntax", None)  # type: ignore[arg-type]
