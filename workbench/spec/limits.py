"""The service's limits, from the spec's Limits table (plus our documented choices)."""

from __future__ import annotations

__all__ = [
    "CURRENCY",
    "IDEMPOTENCY_TTL_SECONDS",
    "INSTALLMENTS_MAX",
    "INSTALLMENTS_MIN",
    "MAX_AMOUNT",
    "MAX_BODY_BYTES",
    "MIN_AMOUNT",
    "REFUND_REASON_MAX",
    "RENEWAL_TRANSACTION_PREFIX",
    "SESSION_LIFETIME_SECONDS",
    "SUBSCRIPTION_PAGE_DEFAULT",
    "SUBSCRIPTION_PAGE_MAX",
    "TIMESTAMP_SKEW_SECONDS",
    "TRANSACTION_ID_MAX",
    "VOID_REASON_MAX",
]

#: Every signed request: X-Timestamp within this many seconds of the server clock.
TIMESTAMP_SKEW_SECONDS = 300
#: Responses to calls carrying Idempotency-Key are kept this long.
IDEMPOTENCY_TTL_SECONDS = 24 * 60 * 60
#: Minimum amount, in kuruş, of a session in mode ``payment`` or ``qr``.
MIN_AMOUNT = 100
#: Installment count of a card charge.
INSTALLMENTS_MIN = 1
INSTALLMENTS_MAX = 12
#: A void reason longer than this is rejected.
VOID_REASON_MAX = 500
#: A refund reason longer than this is truncated (not rejected).
REFUND_REASON_MAX = 500
#: The only currency.
CURRENCY = "TRY"

# Not shown in the spec; the sandbox's decisions (docs/sandbox/decisions.md).
#: Checkout session lifetime.
SESSION_LIFETIME_SECONDS = 30 * 60
#: Subscription list page size: default and maximum.
SUBSCRIPTION_PAGE_DEFAULT = 20
SUBSCRIPTION_PAGE_MAX = 100
#: Largest amount, in kuruş, of one payment or session (999,999,999.99 TL).
MAX_AMOUNT = 99_999_999_999
#: Largest request body the sandbox reads.
MAX_BODY_BYTES = 64 * 1024
#: Longest ``transactionId``, in characters (Unicode code points, not bytes): any
#: non-empty UTF-8 text up to this, compared exactly as sent.
TRANSACTION_ID_MAX = 64
#: ``transactionId`` values starting with this are the sandbox's subscription renewals'
#: (``renewal <subscriptionId> <attempt>``); a merchant's request may not use them.
RENEWAL_TRANSACTION_PREFIX = "renewal "
