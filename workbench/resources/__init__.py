"""The client's resource namespaces, one module per area of the service."""

from workbench.resources.cards import AsyncCards, Cards
from workbench.resources.payments import AsyncPayments, Payments
from workbench.resources.portal import AsyncPortal, Portal
from workbench.resources.sandbox import AsyncSandbox, Sandbox
from workbench.resources.sessions import AsyncSessions, Sessions
from workbench.resources.subscriptions import AsyncSubscriptions, Subscriptions

__all__ = [
    "AsyncCards",
    "AsyncPayments",
    "AsyncPortal",
    "AsyncSandbox",
    "AsyncSessions",
    "AsyncSubscriptions",
    "Cards",
    "Payments",
    "Portal",
    "Sandbox",
    "Sessions",
    "Subscriptions",
]
