"""Test your own integration offline: a sandbox on a free port and helpers to drive it.

Installed with the ``testing`` extra (``pip install '.[testing]'`` from a checkout), the
pytest plugin (`workbench.testing.pytest_plugin`) gives a test suite these as fixtures
with no set-up at all; the helpers here also work without pytest:

- `running_sandbox`: a sandbox on a free 127.0.0.1 port for a ``with`` block, and
  `client_for`, a client signed with its demo merchant's keys;
- `SandboxClock`: moves the sandbox's business clock (renewals, refund settlement,
  3-D Secure timeouts and webhook retries fall due as it moves);
- `FailNext`: makes the merchant's next request fail (``429``, ``500``, ``timeout``);
- `WebhookCollector`: a local receiver the sandbox's webhooks are pointed at, each
  delivery verified with the store's webhook secret.

Each name is imported from its module on first use (PEP 562), so that loading the
plugin, which imports this package, costs nothing until a fixture runs.

Example:
    ```python
    with running_sandbox() as server, client_for(server) as client:
        client.payments.charge_card(
            transaction_id="o-1", amount=2_500, card_token="tok_test_success"
        )
    ```
"""

from typing import TYPE_CHECKING, Any

from workbench._lazy import LazyExports

if TYPE_CHECKING:
    from workbench.testing.controls import FailNext, SandboxClock
    from workbench.testing.sandbox import client_for, running_sandbox
    from workbench.testing.webhooks import WebhookCollector

# In the order the reference page shows them.
__all__ = [  # noqa: RUF022
    "running_sandbox",
    "client_for",
    "SandboxClock",
    "FailNext",
    "WebhookCollector",
]

_EXPORTS = LazyExports(
    __name__,
    {
        "workbench.testing.controls": ("FailNext", "SandboxClock"),
        "workbench.testing.sandbox": ("client_for", "running_sandbox"),
        "workbench.testing.webhooks": ("WebhookCollector",),
    },
)


def __getattr__(name: str) -> Any:
    return _EXPORTS.load(name)


def __dir__() -> list[str]:
    return _EXPORTS.names(globals())
