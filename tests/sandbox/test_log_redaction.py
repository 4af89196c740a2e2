"""Logged paths carry no bearer: portal hashes and checkout session ids are replaced.

uvicorn's access line is ``'%s - "%s %s HTTP/%s" %d'`` with the path (query included)
as its third argument; `RedactedAccessLog` rewrites it in place.
"""

from __future__ import annotations

import logging
import uuid

import pytest

from workbench.sandbox.redaction import RedactedAccessLog, redact_path

SESSION = str(uuid.uuid4())


@pytest.mark.parametrize(
    ("path", "logged"),
    [
        (f"/checkout/{SESSION}", "/checkout/[sessionId]"),
        (f"/checkout/{SESSION}/pay?lang=en", "/checkout/[sessionId]/pay?lang=en"),
        (f"/checkout/{SESSION}/3ds-callback", "/checkout/[sessionId]/3ds-callback"),
        ("/checkout/static/checkout.css", "/checkout/static/checkout.css"),
        (
            f"/v1/public/subscriptions/h4sh?outcome=success&sessionId={SESSION}",
            "/v1/public/subscriptions/[publicHash]?outcome=success&sessionId=[sessionId]",
        ),
        (
            f"/demo/merchant/return?outcome=failed&sessionId={SESSION}&paymentId=pay_1",
            "/demo/merchant/return?outcome=failed&sessionId=[sessionId]&paymentId=pay_1",
        ),
        ("/v1/payments/pay_1/public-status", "/v1/payments/pay_1/public-status"),
    ],
)
def test_a_logged_path_keeps_no_bearer(path: str, logged: str) -> None:
    assert redact_path(path) == logged
    record = logging.LogRecord(
        "uvicorn.access", logging.INFO, __file__, 1, '%s - "%s %s HTTP/%s" %d',
        ("127.0.0.1:5000", "GET", path, "1.1", 200), None,
    )  # fmt: skip
    assert RedactedAccessLog().filter(record)
    assert SESSION not in record.getMessage()
    assert logged in record.getMessage()
