"""Payments Workbench: a signed client, a stateful local sandbox, notebooks and a guide.

The public API is re-exported here; see the guide's reference pages. The sandbox
(`SandboxConfig`, `SandboxServer`) is loaded on first use so that ``import
workbench`` does not pull in the web server stack.
"""

from typing import TYPE_CHECKING, Any

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
    WorkbenchError,
)
from workbench._response import ResponseInfo
from workbench._retry import RetryPolicy
from workbench._version import __version__
from workbench.config import ConfigError, Environment, Settings
from workbench.money import format_try, kurus_to_lira, to_kurus
from workbench.tracking import Tracker, allowed_actions
from workbench.waiting import WaitTimeout, wait_until
from workbench.webhooks import WebhookListener

if TYPE_CHECKING:
    from workbench.sandbox import SandboxConfig, SandboxServer

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

_LAZY = {"SandboxConfig", "SandboxServer"}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import workbench.sandbox

        return getattr(workbench.sandbox, name)
    raise AttributeError(f"module 'workbench' has no attribute {name!r}")
