"""Payments Workbench: a signed client, a stateful local sandbox, notebooks and a guide.

The public API is re-exported here; see the guide's reference pages. Each name is
imported from its module on first use (PEP 562), so that ``import workbench`` costs
next to nothing, ``workbench.Client`` loads the client without the result models, and
nothing here pulls in the sandbox's web server stack.
"""

from typing import TYPE_CHECKING, Any

from workbench._lazy import LazyExports
from workbench._version import __version__

if TYPE_CHECKING:
    from workbench._base_client import RequestOptions
    from workbench._client import AsyncClient, Client
    from workbench._exceptions import (
        APIConnectionError,
        APIError,
        APIKeyError,
        APITimeoutError,
        AuthenticationError,
        BadRequestError,
        CardDeclinedError,
        ConflictError,
        DeclineError,
        IdempotencyConflictError,
        InsufficientFundsError,
        InvalidRequestError,
        MethodNotAllowedError,
        NotFoundError,
        PaymentStateError,
        RateLimitError,
        RawCardDataError,
        RefundAmountError,
        RequestInProgressError,
        RequestTooLargeError,
        ServerError,
        SessionStateError,
        SignatureError,
        StateConflictError,
        SubscriptionStateError,
        ThreeDSecureAssertionError,
        ThreeDSecureFailedError,
        TimestampError,
        UnexpectedResponseError,
        WorkbenchError,
    )
    from workbench._response import ResponseInfo
    from workbench._retry import RetryPolicy
    from workbench.config import ConfigError, Environment, Settings
    from workbench.money import format_try, kurus_to_lira, to_kurus
    from workbench.sandbox import SandboxConfig, SandboxServer
    from workbench.tracking import Tracker, allowed_actions
    from workbench.waiting import WaitTimeout, wait_until
    from workbench.webhooks import WebhookListener

__all__ = [
    "APIConnectionError",
    "APIError",
    "APIKeyError",
    "APITimeoutError",
    "AsyncClient",
    "AuthenticationError",
    "BadRequestError",
    "CardDeclinedError",
    "Client",
    "ConfigError",
    "ConflictError",
    "DeclineError",
    "Environment",
    "IdempotencyConflictError",
    "InsufficientFundsError",
    "InvalidRequestError",
    "MethodNotAllowedError",
    "NotFoundError",
    "PaymentStateError",
    "RateLimitError",
    "RawCardDataError",
    "RefundAmountError",
    "RequestInProgressError",
    "RequestOptions",
    "RequestTooLargeError",
    "ResponseInfo",
    "RetryPolicy",
    "SandboxConfig",
    "SandboxServer",
    "ServerError",
    "SessionStateError",
    "Settings",
    "SignatureError",
    "StateConflictError",
    "SubscriptionStateError",
    "ThreeDSecureAssertionError",
    "ThreeDSecureFailedError",
    "TimestampError",
    "Tracker",
    "UnexpectedResponseError",
    "WaitTimeout",
    "WebhookListener",
    "WorkbenchError",
    "__version__",
    "allowed_actions",
    "format_try",
    "kurus_to_lira",
    "to_kurus",
    "wait_until",
]


_EXPORTS = LazyExports(
    __name__,
    {
        "workbench._base_client": ("RequestOptions",),
        "workbench._client": ("AsyncClient", "Client"),
        "workbench._exceptions": (
            "APIConnectionError",
            "APIError",
            "APIKeyError",
            "APITimeoutError",
            "AuthenticationError",
            "BadRequestError",
            "CardDeclinedError",
            "ConflictError",
            "DeclineError",
            "IdempotencyConflictError",
            "InsufficientFundsError",
            "InvalidRequestError",
            "MethodNotAllowedError",
            "NotFoundError",
            "PaymentStateError",
            "RateLimitError",
            "RawCardDataError",
            "RefundAmountError",
            "RequestInProgressError",
            "RequestTooLargeError",
            "ServerError",
            "SessionStateError",
            "SignatureError",
            "StateConflictError",
            "SubscriptionStateError",
            "ThreeDSecureAssertionError",
            "ThreeDSecureFailedError",
            "TimestampError",
            "UnexpectedResponseError",
            "WorkbenchError",
        ),
        "workbench._response": ("ResponseInfo",),
        "workbench._retry": ("RetryPolicy",),
        "workbench.config": ("ConfigError", "Environment", "Settings"),
        "workbench.money": ("format_try", "kurus_to_lira", "to_kurus"),
        "workbench.sandbox": ("SandboxConfig", "SandboxServer"),
        "workbench.tracking": ("Tracker", "allowed_actions"),
        "workbench.waiting": ("WaitTimeout", "wait_until"),
        "workbench.webhooks": ("WebhookListener",),
    },
)


def __getattr__(name: str) -> Any:
    return _EXPORTS.load(name)


def __dir__() -> list[str]:
    return _EXPORTS.names(globals())
