"""Response bodies shaped as the spec shows them, for offline tests."""

from __future__ import annotations

from typing import Any

TS = "2026-03-14T09:26:53Z"

SESSION: dict[str, Any] = {
    "sessionId": "7d0f0c8e-8a43-4d3c-9b7e-2f9e5f0c1a11",
    "checkoutUrl": "http://127.0.0.1:8765/checkout/7d0f0c8e-8a43-4d3c-9b7e-2f9e5f0c1a11",
    "expiresAt": TS,
    "merchantId": "mrc_demo",
    "amount": 12500,
    "currency": "TRY",
    "status": "active",
}
CHARGE: dict[str, Any] = {
    "paymentId": "pay_1",
    "status": "captured",
    "amount": 12500,
    "currency": "TRY",
    "commission": 350,
    "netAmount": 12150,
    "cardMask": "454360******0001",
    "cardBrand": "VISA",
    "cardType": "CREDIT",
    "installmentCount": 1,
    "threeDSecure": False,
    "authCode": "123456",
    "createdAt": TS,
    "completedAt": TS,
}
THREE_DS: dict[str, Any] = {
    "id": "pay_1",
    "status": "captured",
    "amount": 12500,
    "currency": "TRY",
    "commission": 350,
    "netAmount": 12150,
    "authCode": "123456",
    "completedAt": TS,
}
CAPTURE: dict[str, Any] = {
    "id": "pay_1",
    "status": "captured",
    "amount": 12500,
    "currency": "TRY",
    "commission": 350,
    "netAmount": 12150,
    "refundableAmount": 12500,
    "completedAt": TS,
}
VOID: dict[str, Any] = {"id": "pay_1", "status": "voided", "amount": 12500, "currency": "TRY"}
PUBLIC_STATUS: dict[str, Any] = {"paymentId": "pay_1", "status": "captured"}
REFUND: dict[str, Any] = {
    "paymentId": "pay_1",
    "status": "captured",
    "refundAmount": 2500,
    "refundableAmount": 10000,
    "lastRefund": {
        "refundId": "rfn_1",
        "status": "completed",
        "amount": 2500,
        "bankRefundId": "bnk_1",
        "createdAt": TS,
        "completedAt": TS,
    },
}
PAYMENT: dict[str, Any] = {
    "id": "pay_1",
    "merchantId": "mrc_demo",
    "transactionId": "order-1",
    "status": "captured",
    "amount": 12500,
    "currency": "TRY",
    "commission": 350,
    "netAmount": 12150,
    "cardMask": "454360******0001",
    "cardBrand": "VISA",
    "cardType": "CREDIT",
    "bin": "454360",
    "installmentCount": 1,
    "threeDSecure": True,
    "refundAmount": 0,
    "refundableAmount": 12500,
    "createdAt": TS,
    "completedAt": TS,
}
SUBSCRIPTION: dict[str, Any] = {
    "id": "sub_1",
    "merchantId": "mrc_demo",
    "storeId": "sto_1",
    "customerId": "cus_1",
    "publicHash": "ph_abc",
    "status": "active",
    "amountMinor": 9900,
    "currency": "TRY",
    "intervalCount": 1,
    "intervalUnit": "month",
    "cycleNumber": 0,
    "nextChargeAt": TS,
    "cardLast4": "0001",
    "cardBrand": "VISA",
    "createdAt": TS,
}
LIST_ITEM: dict[str, Any] = {
    k: SUBSCRIPTION[k]
    for k in (
        "id",
        "storeId",
        "status",
        "amountMinor",
        "currency",
        "intervalCount",
        "intervalUnit",
        "nextChargeAt",
        "createdAt",
    )
}
CHARGES: dict[str, Any] = {
    "items": [
        {
            "cycleNumber": 1,
            "paymentId": "pay_9",
            "status": "captured",
            "amountMinor": 9900,
            "chargedAt": TS,
        }
    ]
}
CANCEL: dict[str, Any] = {"id": "sub_1", "status": "active", "cancelAtPeriodEnd": True}
UPDATE: dict[str, Any] = {"id": "sub_1", "status": "paused"}
RETRY: dict[str, Any] = {"id": "sub_1", "status": "past_due", "nextChargeAt": TS}
RECEIPT: dict[str, Any] = {
    "status": "queuing",
    "subscriptionId": "sub_1",
    "expectedAt": TS,
    "checkAt": "/v1/subscriptions/sub_1",
}
PUBLIC_SUB: dict[str, Any] = {
    "publicHash": "ph_abc",
    "merchantName": "Demo Kahve",
    "status": "active",
    "amountMinor": 9900,
    "currency": "TRY",
    "intervalCount": 1,
    "intervalUnit": "month",
    "cardLast4": "0001",
    "cardBrand": "VISA",
    "nextChargeAt": TS,
}
PUBLIC_CANCEL: dict[str, Any] = {
    "publicHash": "ph_abc",
    "status": "active",
    "cancelAtPeriodEnd": True,
}
UPDATE_CARD: dict[str, Any] = {
    "sessionId": SESSION["sessionId"],
    "checkoutUrl": SESSION["checkoutUrl"],
    "expiresAt": TS,
}
CARD_TOKEN: dict[str, Any] = {
    "token": "tok_9f2c",
    "cardMask": "454360******0001",
    "cardBrand": "VISA",
    "cardType": "CREDIT",
    "bin": "454360",
    "last4": "0001",
}
FIXTURES: dict[str, Any] = {
    "merchant": {"id": "mrc_demo0001", "name": "Demo Merchant"},
    "merchantId": "mrc_demo0001",
    "storeId": "sto_demo0001",
    "stores": [
        {
            "id": "sto_demo0001",
            "name": "Demo Store",
            "webhookUrl": "http://127.0.0.1:9/hooks",
            "webhookSecret": "whsec_test_wb_demo_0001",
        }
    ],
    "customers": [
        {
            "id": "cus_demo_ayse",
            "name": "Ayse",
            "email": "ayse@example.com",
            "savedCards": [{"token": "tok_test_success", "default": True}],
        }
    ],
    "testCards": [
        {
            "token": "tok_test_success",
            "behaviour": "success",
            "brand": "VISA",
            "cardType": "CREDIT",
            "number": "4543600000000001",
            "description": "approves",
        }
    ],
    "businessTime": TS,
}
EVENTS: dict[str, Any] = {
    "items": [
        {
            "id": "evt_1",
            "type": "payment.voided",
            "createdAt": TS,
            "merchantId": "mrc_demo0001",
            "data": {"paymentId": "pay_1", "reason": "r"},
            "delivery": {"state": "no_endpoint", "url": None, "attempts": 0},
        }
    ]
}
DELIVERIES: dict[str, Any] = {
    "eventId": "evt_1",
    "type": "payment.voided",
    "state": "delivered",
    "attempts": [{"attempt": 1, "attemptedAt": TS, "statusCode": 200}],
}
CHALLENGE: dict[str, Any] = {
    "paymentId": "pay_1",
    "correlationId": "cor_1",
    "pares": "abc.def",
    "result": "Y",
}

#: ``POST /sandbox/merchants``: a merchant made on demand (test values, not real secrets).
MERCHANT: dict[str, Any] = {
    "merchantId": "mrc_1",
    "name": "mine",
    "storeId": "sto_1",
    "apiKey": "pk_test_wb_made_1",
    "secretKey": "sk_test_wb_made_secret_1",
    "webhookSecret": "whsec_test_wb_made_1",
    "customers": ["cus_1_ayse"],
    "created": TS,
}
