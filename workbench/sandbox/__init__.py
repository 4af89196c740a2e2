"""The local sandbox: a stateful emulator of the payments service.

`create_app` builds the ASGI app, `SandboxServer` runs it on a free port in a thread,
and `SandboxConfig` says how (database, demo keys, limits). ``workbench sandbox``
runs it from the command line.
"""

from workbench.sandbox.app import create_app
from workbench.sandbox.config import SandboxConfig
from workbench.sandbox.fixtures import (
    DEMO_MERCHANT_ID,
    DEMO_STORE_ID,
    OTHER_API_KEY,
    OTHER_MERCHANT_ID,
    OTHER_SECRET_KEY,
    REVOKED_API_KEY,
    REVOKED_SECRET_KEY,
)
from workbench.sandbox.runtime import SandboxRuntime
from workbench.sandbox.server import SandboxServer

__all__ = [
    "DEMO_MERCHANT_ID",
    "DEMO_STORE_ID",
    "OTHER_API_KEY",
    "OTHER_MERCHANT_ID",
    "OTHER_SECRET_KEY",
    "REVOKED_API_KEY",
    "REVOKED_SECRET_KEY",
    "SandboxConfig",
    "SandboxRuntime",
    "SandboxServer",
    "create_app",
]
