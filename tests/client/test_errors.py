"""Error mapping: every code of the spec to its class, then the HTTP status as fallback."""

from __future__ import annotations

import httpx2
import pytest

from tests.client.script import Script, envelope
from workbench import _exceptions as errors
from workbench._client import Client
from workbench._retry import RetryPolicy
from workbench.spec import ERRORS

_FAMILY = {
    400: errors.BadRequestError,
    401: errors.AuthenticationError,
    402: errors.DeclineError,
    404: errors.NotFoundError,
    405: errors.MethodNotAllowedError,
    409: errors.ConflictError,
    413: errors.RequestTooLargeError,
    429: errors.RateLimitError,
    431: errors.APIError,
    500: errors.ServerError,
    503: errors.ServerError,
}

_EXPECTED = {
    "SVC-GW-1001": errors.TimestampError,
    "SVC-GW-1002": errors.SignatureError,
    "SVC-GW-1003": errors.APIKeyError,
    "SVC-GW-1004": errors.RateLimitError,
    "SVC-GW-1005": errors.AuthenticationError,
    "SVC-GW-1006": errors.AuthenticationError,
    "SVC-GW-2001": errors.IdempotencyConflictError,
    "SVC-GW-2002": errors.RequestInProgressError,
    "SVC-GW-4000": errors.BadRequestError,
    "SVC-GW-4004": errors.NotFoundError,
    "SVC-GW-4005": errors.MethodNotAllowedError,
    "SVC-GW-4013": errors.RequestTooLargeError,
    "SVC-GW-4031": errors.APIError,
    "SVC-GW-4090": errors.ConflictError,
    "SVC-GW-5000": errors.ServerError,
    "SVC-GW-5030": errors.ServerError,
    "SVC-VAL-4001": errors.InvalidRequestError,
    "SVC-VAL-4002": errors.RawCardDataError,
    "SVC-PAY-3001": errors.CardDeclinedError,
    "SVC-PAY-3002": errors.InsufficientFundsError,
    "SVC-PAY-3003": errors.ThreeDSecureFailedError,
    "SVC-PAY-4001": errors.ThreeDSecureAssertionError,
    "SVC-PAY-4002": errors.RefundAmountError,
    "SVC-PAY-4090": errors.PaymentStateError,
    "SVC-SES-4090": errors.SessionStateError,
    "SVC-SUB-4090": errors.SubscriptionStateError,
}


def test_every_spec_code_has_an_expected_class() -> None:
    assert set(_EXPECTED) == set(ERRORS)


@pytest.mark.parametrize("code", sorted(ERRORS))
def test_each_code_raises_its_class_with_the_envelope(
    client: Client, script: Script, code: str
) -> None:
    spec = ERRORS[code]
    script.replies = [envelope(code, spec.http_status, request_id="req-" + code)]
    with pytest.raises(errors.APIError) as info:
        client.payments.retrieve("pay_1")
    err = info.value
    assert type(err) is _EXPECTED[code]
    # A decline is told by its code (a 400 on the wire, never a BadRequestError).
    declined = code.startswith("SVC-PAY-3")
    assert isinstance(err, errors.DeclineError if declined else _FAMILY[spec.http_status])
    assert isinstance(err, errors.BadRequestError) is (spec.http_status == 400 and not declined)
    assert err.code == code
    assert err.http_status == spec.http_status
    assert err.request_id == "req-" + code
    assert err.message == f"{code} happened"
    assert err.spec is spec
    assert err.retryable is spec.retryable
    assert "req-" + code in str(err)
    # retried exactly when the spec calls the code retryable
    assert len(script.requests) == (3 if spec.retryable else 1)


@pytest.mark.parametrize("code", sorted(ERRORS))
def test_retry_decision_agrees_with_the_spec(code: str) -> None:
    spec = ERRORS[code]
    response = envelope(code, spec.http_status)
    assert RetryPolicy.should_retry_response(response, code) is spec.retryable


@pytest.mark.parametrize(
    ("status", "cls"),
    [
        (400, errors.BadRequestError),
        (401, errors.AuthenticationError),
        (402, errors.DeclineError),
        (404, errors.NotFoundError),
        (409, errors.ConflictError),
        (429, errors.RateLimitError),
        (502, errors.ServerError),
        (418, errors.APIError),
    ],
)
def test_unknown_code_falls_back_to_the_status(status: int, cls: type) -> None:
    response = envelope("SVC-NEW-9999", status)
    err = errors.make_api_error(response)
    assert type(err) is cls
    assert err.code == "SVC-NEW-9999"
    assert err.spec is None


def test_a_body_that_is_not_json_is_not_the_api_and_uses_the_header_request_id() -> None:
    response = httpx2.Response(
        502,
        text="<html><title>Bad Gateway</title>bad gateway</html>",
        headers={"X-Request-Id": "req-hdr", "Content-Type": "text/html"},
    )
    err = errors.make_api_error(response, retries=2)
    assert isinstance(err, errors.UnexpectedResponseError)
    assert err.request_id == "req-hdr"
    assert err.code == ""
    assert err.message == (
        'the server answered HTTP 502 with an HTML page ("Bad Gateway"), not the API\'s JSON'
    )
    assert err.retryable, "a gateway's 502 may pass once the API behind it is back"
    assert err.retries == 2
    assert "req-hdr" in str(err)


def test_a_json_body_without_the_envelope_keeps_the_status_class() -> None:
    response = httpx2.Response(502, json={"detail": "upstream"})
    err = errors.make_api_error(response)
    assert type(err) is errors.ServerError
    assert err.message == '{"detail":"upstream"}'


def test_envelope_request_id_wins_over_header() -> None:
    response = httpx2.Response(
        404,
        json={"code": "SVC-GW-4004", "message": "no such payment", "requestId": "req-body"},
        headers={"X-Request-Id": "req-hdr"},
    )
    err = errors.make_api_error(response)
    assert err.request_id == "req-body"
    assert str(err) == "SVC-GW-4004 (HTTP 404): no such payment [request_id=req-body]"


def test_connection_errors_are_not_api_errors() -> None:
    assert not issubclass(errors.APIConnectionError, errors.APIError)
    assert issubclass(errors.APITimeoutError, errors.APIConnectionError)
    assert issubclass(errors.APIError, errors.WorkbenchError)


def test_the_tree_in_the_docstring_names_every_class() -> None:
    doc = errors.__doc__ or ""
    for name in errors.__all__:
        obj = getattr(errors, name)
        if isinstance(obj, type):
            assert name in doc, name


@pytest.mark.parametrize("status", [400, 402])
def test_an_unknown_decline_code_is_still_a_decline(status: int) -> None:
    response = envelope("SVC-PAY-3999", status)
    assert errors.error_class_for("SVC-PAY-3999", response.status_code) is errors.DeclineError
