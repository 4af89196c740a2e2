"""Nothing secret in a log line, a repr or an exception: captured at debug level."""

from __future__ import annotations

import logging

import httpx2
import pytest

from tests.client import samples
from tests.client.offline import API_KEY, SECRET_KEY
from tests.client.script import Script, envelope, ok
from workbench._client import Client
from workbench._exceptions import APIError


def test_debug_logs_reprs_and_errors_hold_no_secret(
    client: Client, script: Script, caplog: pytest.LogCaptureFixture
) -> None:
    script.replies = [
        envelope("SVC-GW-5000", 500),
        ok(samples.CHARGE),
        envelope("SVC-GW-1002", 401),
    ]
    with caplog.at_level(logging.DEBUG, logger="workbench"):
        result = client.payments.charge_card(
            transaction_id="o", amount=12500, card_token="tok_test_success"
        )
        with pytest.raises(APIError) as info:
            client.payments.retrieve("pay_1")
    signatures = [r.headers["X-Signature"] for r in script.requests]
    texts = [r.getMessage() for r in caplog.records]
    texts += [repr(client), str(client), repr(result), str(result), repr(result.response)]
    texts += [str(info.value), repr(info.value), repr(client._auth)]
    blob = "\n".join(texts)
    assert SECRET_KEY not in blob
    assert API_KEY not in blob
    for signature in signatures:
        assert signature not in blob
    # the lines are there, and useful: the canonical string and a signature prefix
    assert any("canonical=" in t for t in texts)
    assert signatures[0][:8] in blob
    assert "-> 500" in blob
    assert "retrying POST /v1/payments/card" in blob


def test_workbench_log_env_turns_on_debug(script: Script, monkeypatch: pytest.MonkeyPatch) -> None:
    logger = logging.getLogger("workbench")
    before = (logger.level, list(logger.handlers))
    monkeypatch.setenv("WORKBENCH_LOG", "debug")
    try:
        Client(API_KEY, SECRET_KEY, "http://t", transport=httpx2.MockTransport(script)).close()
        assert logger.level == logging.DEBUG
        assert any(h.get_name() == "workbench-stderr" for h in logger.handlers)
    finally:
        logger.setLevel(before[0])
        logger.handlers[:] = before[1]


def test_card_number_and_cvc_stay_out_of_logs_and_reprs(
    client: Client, script: Script, caplog: pytest.LogCaptureFixture
) -> None:
    script.replies = [envelope("SVC-GW-5030", 503), ok(samples.CARD_TOKEN)]
    with caplog.at_level(logging.DEBUG, logger="workbench"):
        token = client.cards.tokenize(
            card_number="4543600000000001", expiry_month=12, expiry_year=2030, cvc="987"
        )
    blob = "\n".join([r.getMessage() for r in caplog.records] + [repr(token), str(token)])
    assert len(caplog.records) >= 3
    assert "4543600000000001" not in blob
    assert "cvc" not in blob.lower()
    assert token.token == "tok_9f2c"
