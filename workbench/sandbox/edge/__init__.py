"""The HTTP edge: one small pure-ASGI middleware per concern, in the order a request meets them.

Each layer reads and writes the one typed request state (`workbench.sandbox.context.
RequestState`) and answers a refusal in the error envelope itself; none imports a
feature, and no feature imports the edge (import contracts in ``pyproject.toml``).
`workbench.sandbox.app.create_app` stacks them, outermost first:

1. `RequestIdMiddleware` (`requestid`): the request's id, taken or made, echoed.
1a. `ExchangeLog` (`exchange_log`, unless the request log is off): each merchant's
   exchange handed to the request log's queue once answered.
2. `HostGuard` (`hosts`): only the hosts this sandbox serves.
3. `DocsHeaders` (`docs_headers`): a Content-Security-Policy on Swagger UI's pages.
4. `CanonicalPath` (`paths`): an API path loses its trailing slash.
5. `MethodGate` (`methods`): a method the path's routes do not take, 405 with ``Allow``.
6. `AddressRateLimit` (`ratelimit_address`): the unsigned routes, per client address.
7. `BodyLimits` (`body`): the body read once; too large or carrying a NUL refused.
8. `SignatureCheck` (`signature`): who signed it (`Caller`), or the refusal.
9. `StrictReplay` (`replay`, strict replay mode only): a signature accepted once.
10. `KeyRateLimit` (`ratelimit`): the signed request's key, per key.
11. `MerchantSwitches` (`switches`): a pending fail-next, the simulated latency.
12. `DuplicateKeys` (`jsonbody`): a JSON body naming a key twice refused; parsed once.

Beside them: the exception handlers that give FastAPI's and Starlette's failures the
envelope (`handlers`), the methods each path takes (`allow`), the key records kept
between requests (`keycache`), and uvicorn's protocol with the header limits
(`httplimits`).
"""

from __future__ import annotations

from workbench.sandbox.edge.body import BodyLimits
from workbench.sandbox.edge.docs_headers import DocsHeaders
from workbench.sandbox.edge.exchange_log import ExchangeLog
from workbench.sandbox.edge.hosts import HostGuard, allowed_hosts
from workbench.sandbox.edge.jsonbody import DuplicateKeys
from workbench.sandbox.edge.methods import MethodGate
from workbench.sandbox.edge.paths import CanonicalPath
from workbench.sandbox.edge.ratelimit import KeyRateLimit
from workbench.sandbox.edge.ratelimit_address import AddressRateLimit
from workbench.sandbox.edge.replay import StrictReplay
from workbench.sandbox.edge.requestid import RequestIdMiddleware
from workbench.sandbox.edge.signature import SignatureCheck
from workbench.sandbox.edge.switches import MerchantSwitches

__all__ = [
    "AddressRateLimit",
    "BodyLimits",
    "CanonicalPath",
    "DocsHeaders",
    "DuplicateKeys",
    "ExchangeLog",
    "HostGuard",
    "KeyRateLimit",
    "MerchantSwitches",
    "MethodGate",
    "RequestIdMiddleware",
    "SignatureCheck",
    "StrictReplay",
    "allowed_hosts",
]
