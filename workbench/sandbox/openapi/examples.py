"""Request and response examples of the OpenAPI document, made of the sandbox's fixtures.

Every value a fresh sandbox knows (store, customers, test cards, the challenge code)
comes from `workbench.sandbox.fixtures` and `workbench.sandbox.cards`, so each request
example works as it stands against a fresh sandbox, or with only the path's
identifier filled in. Responses are what such a request was answered (identifiers
and times are those of one run). The tests post the requests and compare the answers'
fields with these.
"""

from __future__ import annotations

from typing import Any

from workbench.sandbox.cards import CHALLENGE_CODE, TEST_CARDS
from workbench.sandbox.fixtures import CUSTOMERS, DEMO_MERCHANT_ID, DEMO_STORE_ID

__all__ = ["REQUESTS", "RESPONSES"]

_CARD = {card.behaviour: card for card in TEST_CARDS}
_AYSE = CUSTOMERS[0]
_BASE = "http://127.0.0.1:8765"  # `workbench sandbox`'s address
_PAYMENT = "pay_01a20cb3ec625f0148aad463"
_CHALLENGED = "pay_01a20cb3edcf6f0f9874a8dd"
_CORRELATION = "4dc1f6f4-feed-430e-833c-6b4893b13c70"
_SUBSCRIPTION = "sub_01a20cb3ef340da325cb56c3"
_HASH = "KNhAcDXMBNYDM_b9vJh5byU8GRsNVR2M"
_SESSION = "1964f726-7c72-41d4-8f5e-f09724ee84fb"
_NOW = "2026-11-24T08:37:27Z"
_PARES = (
    "eyJjb3JyZWxhdGlvbklkIjogIjRkYzFmNmY0LWZlZWQtNDMwZS04MzNjLTZiNDg5M2IxM2M3MCIsICJwYXlt"
    "ZW50SWQiOiAicGF5XzAxYTIwY2IzZWRjZjZmMGY5ODc0YThkZCIsICJyZXN1bHQiOiAiWSJ9.e1c934bc3f6b6"
    "27106f0ab83bd3b47a170dd4563beb6c8df9487f929efc2ffc0"
)

#: ``operationId -> (summary, request body)``.
REQUESTS: dict[str, tuple[str, dict[str, Any]]] = {
    "createCheckoutSession": (
        "A 250.00 TRY hosted checkout",
        {
            "transactionId": "order-1001",
            "amount": 25000,
            "currency": "TRY",
            "returnUrl": "https://shop.example/return",
            "description": "Order 1001",
        },
    ),
    "chargeCard": (
        f"100.00 TRY on {_CARD['success'].token}",
        {
            "transactionId": "order-1002",
            "amount": 10000,
            "currency": "TRY",
            "cardToken": _CARD["success"].token,
            "installmentCount": 1,
        },
    ),
    "completeThreeDSChallenge": (
        "The pares the challenge page returned",
        {"pares": _PARES, "correlationId": _CORRELATION},
    ),
    "capturePayment": ("The full amount (the only choice)", {}),
    "voidPayment": ("Release the authorization", {"reason": "order cancelled"}),
    "refundPayment": ("Refund 25.00 TRY", {"amount": 2500, "reason": "one item returned"}),
    "createCardToken": (
        "The test card that is approved",
        {
            "cardNumber": _CARD["success"].number,
            "expiryMonth": 12,
            "expiryYear": 2030,
            "cvc": "123",
            "cardholderName": _AYSE.name,
        },
    ),
    "createSubscription": (
        f"99.90 TRY a month on {_AYSE.id}'s default card",
        {
            "storeId": DEMO_STORE_ID,
            "customerId": _AYSE.id,
            "amountMinor": 9990,
            "currency": "TRY",
            "intervalCount": 1,
            "intervalUnit": "month",
        },
    ),
    "cancelSubscription": ("Cancel now", {"atPeriodEnd": False, "reason": "customer asked"}),
    "pauseSubscription": ("An empty object", {}),
    "resumeSubscription": ("An empty object", {}),
    "retrySubscription": ("An empty object", {}),
    "chargeSubscriptionNow": ("An empty object", {}),
    "cancelPortalSubscription": ("At the end of the period", {"atPeriodEnd": True}),
    "createPortalCardUpdateSession": ("An empty object", {}),
    "advanceSandboxClock": ("One hour", {"seconds": 3600}),
    "failNextSandboxRequest": ("The next request answers 500", {"mode": "500", "seconds": 10}),
    "setSandboxLatency": ("No added latency", {"milliseconds": 0}),
    "setSandboxRateLimit": ("Back to the default limit", {"perSecond": None, "burst": 1}),
    "setSandboxAuthorizationLifetime": ("Back to the default (7 days)", {"seconds": None}),
    "setSandboxWebhook": ("Deliver events here", {"url": "https://shop.example/webhooks"}),
    "createSandboxMerchant": ("A merchant of your own, named", {"name": "Ayşe's laptop"}),
    "answerSandboxChallenge": (
        "The code that passes",
        {"correlationId": _CORRELATION, "code": CHALLENGE_CODE},
    ),
}

_CHARGED = {
    "amount": 10000,
    "currency": "TRY",
    "commission": 249,
    "netAmount": 9751,
}
_SUBSCRIBED = {
    "status": "active",
    "amountMinor": 9990,
    "currency": "TRY",
    "intervalCount": 1,
    "intervalUnit": "month",
}

#: ``operationId -> (status, summary, response body)``: the answer to the request above.
RESPONSES: dict[str, tuple[int, str, dict[str, Any]]] = {
    "createSandboxMerchant": (
        201,
        "Its keys: the secret key and webhook secret are shown in this answer only",
        {
            "merchantId": "mrc_01a20cb3edcf6f0f9874a8dd",
            "name": "Ayşe's laptop",
            "storeId": "sto_01a20cb3edcf6f0f9874a8dd",
            "apiKey": "pk_test_wb_5d1f0c2a9e4b7d3c8a6f1e20",
            "secretKey": "sk_test_wb_<32 hexadecimal digits, shown once>",
            "webhookSecret": "whsec_test_wb_<24 hexadecimal digits, shown once>",
            "customers": [
                "cus_01a20cb3edcf6f0f9874a8dd_ayse",
                "cus_01a20cb3edcf6f0f9874a8dd_mehmet",
                "cus_01a20cb3edcf6f0f9874a8dd_zeynep",
            ],
            "created": "2026-11-24T08:37:27Z",
        },
    ),
    "createCheckoutSession": (
        201,
        "The session; send the buyer to checkoutUrl",
        {
            "sessionId": _SESSION,
            "checkoutUrl": f"{_BASE}/checkout/{_SESSION}",
            "expiresAt": "2026-11-24T09:07:27Z",
            "merchantId": DEMO_MERCHANT_ID,
            "amount": 25000,
            "currency": "TRY",
            "status": "active",
        },
    ),
    "chargeCard": (
        201,
        "Captured at once (frictionless 3-D Secure)",
        {
            "paymentId": _PAYMENT,
            "status": "captured",
            **_CHARGED,
            "cardMask": "424242******4242",
            "cardBrand": _CARD["success"].brand,
            "cardType": _CARD["success"].card_type,
            "installmentCount": 1,
            "threeDSecure": True,
            "authCode": "338556",
            "createdAt": _NOW,
            "completedAt": _NOW,
        },
    ),
    "completeThreeDSChallenge": (
        200,
        "The challenge passed: captured",
        {
            "id": _CHALLENGED,
            "status": "captured",
            **_CHARGED,
            "authCode": "935427",
            "completedAt": _NOW,
        },
    ),
    "capturePayment": (
        200,
        "Captured",
        {
            "id": _PAYMENT,
            "status": "captured",
            **_CHARGED,
            "refundableAmount": 10000,
            "completedAt": _NOW,
        },
    ),
    "voidPayment": (
        200,
        "Voided",
        {"id": _PAYMENT, "status": "voided", "amount": 10000, "currency": "TRY"},
    ),
    "refundPayment": (
        200,
        "Settled at once",
        {
            "paymentId": _PAYMENT,
            "status": "captured",
            "refundAmount": 2500,
            "refundableAmount": 7500,
            "lastRefund": {
                "refundId": "rfn_01a20cb3ed6de58969ac8043",
                "status": "completed",
                "amount": 2500,
                "bankRefundId": "BNKE01927991FE3",
                "createdAt": _NOW,
                "completedAt": _NOW,
            },
        },
    ),
    "getPayment": (
        200,
        "A captured payment",
        {
            "id": _PAYMENT,
            "merchantId": DEMO_MERCHANT_ID,
            "transactionId": "order-1002",
            "status": "captured",
            **_CHARGED,
            "cardMask": "424242******4242",
            "cardBrand": _CARD["success"].brand,
            "cardType": _CARD["success"].card_type,
            "bin": "424242",
            "installmentCount": 1,
            "threeDSecure": True,
            "refundAmount": 0,
            "refundableAmount": 10000,
            "createdAt": _NOW,
            "completedAt": _NOW,
        },
    ),
    "getPaymentPublicStatus": (
        200,
        "Only the id and the status",
        {"paymentId": _PAYMENT, "status": "captured"},
    ),
    "createCardToken": (
        201,
        "A new vault token",
        {
            "token": "tok_4afaf198903a9c623dcd70bb",
            "cardMask": "424242******4242",
            "cardBrand": _CARD["success"].brand,
            "cardType": _CARD["success"].card_type,
            "bin": "424242",
            "last4": "4242",
        },
    ),
    "createSubscription": (
        201,
        "Created; publicHash is shown this once",
        {
            "id": _SUBSCRIPTION,
            "merchantId": DEMO_MERCHANT_ID,
            "storeId": DEMO_STORE_ID,
            "customerId": _AYSE.id,
            "publicHash": _HASH,
            **_SUBSCRIBED,
            "cycleNumber": 0,
            "nextChargeAt": "2026-12-24T08:37:28Z",
            "cardLast4": "4242",
            "cardBrand": "visa",
            "createdAt": _NOW,
            "cancelAtPeriodEnd": False,
            "trialEndAt": None,
        },
    ),
    "listSubscriptions": (
        200,
        "The last page",
        {
            "items": [
                {
                    "id": _SUBSCRIPTION,
                    "storeId": DEMO_STORE_ID,
                    **_SUBSCRIBED,
                    "nextChargeAt": "2026-12-24T08:37:28Z",
                    "createdAt": _NOW,
                }
            ],
            "nextCursor": None,
        },
    ),
    "getSubscription": (
        200,
        "An active subscription",
        {
            "id": _SUBSCRIPTION,
            "merchantId": DEMO_MERCHANT_ID,
            "storeId": DEMO_STORE_ID,
            "customerId": _AYSE.id,
            **_SUBSCRIBED,
            "cycleNumber": 0,
            "nextChargeAt": "2026-12-24T08:37:28Z",
            "cardLast4": "4242",
            "cardBrand": "visa",
            "createdAt": _NOW,
            "cancelAtPeriodEnd": False,
            "trialEndAt": None,
        },
    ),
    "listSubscriptionCharges": (
        200,
        "One renewal",
        {
            "items": [
                {
                    "cycleNumber": 1,
                    "paymentId": _PAYMENT,
                    "status": "captured",
                    "amountMinor": 9990,
                    "chargedAt": "2026-12-24T08:37:28Z",
                }
            ]
        },
    ),
    "cancelSubscription": (
        200,
        "Cancelled now",
        {"id": _SUBSCRIPTION, "status": "cancelled", "cancelAtPeriodEnd": False},
    ),
    "pauseSubscription": (200, "Paused", {"id": _SUBSCRIPTION, "status": "paused"}),
    "resumeSubscription": (200, "Active again", {"id": _SUBSCRIPTION, "status": "active"}),
    "retrySubscription": (
        200,
        "Retried on the next reconciler pass",
        {"id": _SUBSCRIPTION, "status": "past_due", "nextChargeAt": _NOW},
    ),
    "chargeSubscriptionNow": (
        202,
        "Queued: poll checkAt",
        {
            "status": "queuing",
            "subscriptionId": _SUBSCRIPTION,
            "expectedAt": _NOW,
            "checkAt": f"/v1/subscriptions/{_SUBSCRIPTION}",
        },
    ),
    "getPortalSubscription": (
        200,
        "What the buyer sees",
        {
            "publicHash": _HASH,
            "merchantName": "Demo Merchant",
            **_SUBSCRIBED,
            "cardLast4": "4242",
            "cardBrand": "visa",
            "nextChargeAt": "2026-12-24T08:37:28Z",
        },
    ),
    "cancelPortalSubscription": (
        200,
        "Ends at the period's end",
        {"publicHash": _HASH, "status": "active", "cancelAtPeriodEnd": True},
    ),
    "createPortalCardUpdateSession": (
        201,
        "A card_update_only session",
        {
            "sessionId": _SESSION,
            "checkoutUrl": f"{_BASE}/checkout/{_SESSION}",
            "expiresAt": "2026-11-24T09:07:29Z",
        },
    ),
    "answerSandboxChallenge": (
        200,
        "Post pares and correlationId to 3ds-callback",
        {
            "paymentId": _CHALLENGED,
            "correlationId": _CORRELATION,
            "pares": _PARES,
            "result": "Y",
        },
    ),
}
