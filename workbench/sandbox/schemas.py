"""Where `ChargeRequest` was: each feature's bodies are in its ``models`` module now.

``shortcut.py``, which another branch is changing, still imports `ChargeRequest` from
here; once it imports `workbench.sandbox.payments.models`, this module goes.
"""

from workbench.sandbox.payments.models import ChargeRequest

__all__ = ["ChargeRequest"]
