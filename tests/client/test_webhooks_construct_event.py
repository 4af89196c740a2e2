"""`construct_event`: the merchant's check of one webhook delivery."""

from __future__ import annotations

import json
import traceback
from datetime import UTC, datetime, timedelta

import pytest

from workbench.signing import format_timestamp, sign_request
from workbench.webhooks import (
    SeenEventIds,
    WebhookEvent,
    WebhookPayloadError,
    WebhookReplayError,
    WebhookSignatureError,
    WebhookTimestampError,
    WebhookVerificationError,
    construct_event,
)

SECRET = "whsec_test_unit_construct_0001"
PATH = "/hooks/payments"
NOW = datetime(2026, 3, 14, 9, 26, 53, tzinfo=UTC)
EVENT = {
    "id": "evt_0123456789abcdef01234567",
    "type": "payment.captured",
    "createdAt": "2026-03-14T09:26:50Z",
    "merchantId": "mrc_demo0001",
    "data": {"paymentId": "pay_1", "status": "captured", "amount": 125050, "currency": "TRY"},
}


def _signed(
    body: bytes,
    *,
    at: datetime = NOW,
    secret: str = SECRET,
    path: str = PATH,
    event_id: str | None = EVENT["id"],  # type: ignore[assignment]
) -> dict[str, str]:
    signed = sign_request(
        api_key="webhook",
        secret_key=secret,
        method="POST",
        url=path,
        body=body,
        timestamp=format_timestamp(at),
    )
    headers = {
        "Content-Type": "application/json",
        "X-Timestamp": signed.timestamp,
        "X-Signature": signed.signature,
        "X-Event-Type": "payment.captured",
    }
    if event_id is not None:
        headers["X-Event-Id"] = event_id
    return headers


BODY = json.dumps(EVENT, separators=(",", ":")).encode()


def test_a_good_delivery_becomes_a_typed_event() -> None:
    event = construct_event(BODY, _signed(BODY), SECRET, path=PATH, now=NOW)
    assert isinstance(event, WebhookEvent)
    assert event.id == EVENT["id"]
    assert event.type == "payment.captured"
    assert event.created_at == datetime(2026, 3, 14, 9, 26, 50, tzinfo=UTC)
    assert event.merchant_id == "mrc_demo0001"
    assert event.data["amount"] == 125050
    assert event.object_id == "pay_1"
    assert event.raw == BODY


def test_header_names_any_case_text_body_and_a_full_url_path() -> None:
    headers = {k.upper(): v for k, v in _signed(BODY).items()}
    event = construct_event(
        BODY.decode(), headers, SECRET, path=f"https://shop.example{PATH}?x=1", now=NOW
    )
    assert event.id == EVENT["id"]


@pytest.mark.parametrize(
    ("body", "headers_for", "path"),
    [
        (BODY.replace(b"125050", b"1"), BODY, PATH),  # the amount changed in transit
        (BODY, BODY, "/hooks/other"),  # posted to another path than was signed
    ],
    ids=["tampered-body", "other-path"],
)
def test_a_bad_signature_is_rejected(body: bytes, headers_for: bytes, path: str) -> None:
    with pytest.raises(WebhookSignatureError):
        construct_event(body, _signed(headers_for), SECRET, path=path, now=NOW)


def test_a_signature_under_another_secret_is_rejected() -> None:
    headers = _signed(BODY, secret="whsec_someone_else")
    with pytest.raises(WebhookSignatureError):
        construct_event(BODY, headers, SECRET, path=PATH, now=NOW)


def test_a_stale_timestamp_is_rejected_even_with_a_good_signature() -> None:
    headers = _signed(BODY, at=NOW - timedelta(seconds=301))
    with pytest.raises(WebhookTimestampError) as caught:
        construct_event(BODY, headers, SECRET, path=PATH, now=NOW, tolerance=300)
    assert caught.value.reason == "stale"
    # At the edge of the tolerance it still passes.
    at_edge = _signed(BODY, at=NOW - timedelta(seconds=300))
    assert construct_event(BODY, at_edge, SECRET, path=PATH, now=NOW, tolerance=300).id


def test_a_future_timestamp_is_rejected() -> None:
    headers = _signed(BODY, at=NOW + timedelta(seconds=61))
    with pytest.raises(WebhookTimestampError) as caught:
        construct_event(BODY, headers, SECRET, path=PATH, now=NOW, tolerance=60)
    assert caught.value.reason == "future"


def test_tolerance_is_the_callers() -> None:
    headers = _signed(BODY, at=NOW - timedelta(seconds=120))
    assert construct_event(BODY, headers, SECRET, path=PATH, now=NOW, tolerance=300).id
    with pytest.raises(WebhookTimestampError):
        construct_event(BODY, headers, SECRET, path=PATH, now=NOW, tolerance=60)


def test_a_replayed_delivery_is_rejected_and_a_released_id_is_taken_again() -> None:
    seen = SeenEventIds()
    first = construct_event(BODY, _signed(BODY), SECRET, path=PATH, now=NOW, seen=seen)
    assert first.id in seen
    # The same event again, even re-signed with a fresh timestamp, is a replay.
    later = _signed(BODY, at=NOW + timedelta(seconds=10))
    with pytest.raises(WebhookReplayError) as caught:
        construct_event(BODY, later, SECRET, path=PATH, now=NOW, seen=seen)
    assert caught.value.event_id == EVENT["id"]
    # Processing failed: release the id so the sender's retry is processed.
    seen.release(first.id)
    assert construct_event(BODY, later, SECRET, path=PATH, now=NOW, seen=seen).id == first.id


def test_an_unverified_delivery_claims_nothing() -> None:
    seen = SeenEventIds()
    with pytest.raises(WebhookSignatureError):
        construct_event(
            BODY, _signed(BODY, secret="whsec_x"), SECRET, path=PATH, now=NOW, seen=seen
        )
    assert len(seen) == 0


def test_the_seen_store_forgets_the_oldest_past_its_size() -> None:
    seen = SeenEventIds(max_size=2)
    assert [seen.claim(i) for i in ("a", "b", "a", "c")] == [True, True, False, True]
    assert "a" not in seen
    assert seen.claim("a") is True


@pytest.mark.parametrize(
    ("body", "words"),
    [
        (b"{not json", "not JSON"),
        (b"\xff\xfe", "not JSON"),
        (b"[1, 2]", "not a JSON object"),
        (b'{"id": "evt_1", "type": "payment.captured"}', "createdAt"),
        (b'{"id": "evt_1", "createdAt": "yesterday", "type": "x"}', "createdAt"),
    ],
    ids=["malformed", "not-utf8", "array", "no-createdAt", "bad-createdAt"],
)
def test_a_signed_body_that_is_no_event_is_rejected(body: bytes, words: str) -> None:
    headers = _signed(body, event_id=None)
    with pytest.raises(WebhookPayloadError) as caught:
        construct_event(body, headers, SECRET, path=PATH, now=NOW)
    assert words in str(caught.value)


def test_an_event_id_header_that_disagrees_with_the_signed_body_is_rejected() -> None:
    headers = _signed(BODY, event_id="evt_ffffffffffffffffffffffff")
    with pytest.raises(WebhookPayloadError, match="X-Event-Id"):
        construct_event(BODY, headers, SECRET, path=PATH, now=NOW)


@pytest.mark.parametrize(
    ("drop", "error", "reason"),
    [
        ("X-Timestamp", WebhookTimestampError, "missing"),
        ("X-Signature", WebhookSignatureError, None),
    ],
)
def test_missing_headers_are_rejected(
    drop: str, error: type[WebhookVerificationError], reason: str | None
) -> None:
    headers = _signed(BODY)
    del headers[drop]
    with pytest.raises(error) as caught:
        construct_event(BODY, headers, SECRET, path=PATH, now=NOW)
    assert drop in str(caught.value)
    if reason is not None:
        assert getattr(caught.value, "reason", None) == reason


def test_a_timestamp_with_an_offset_is_rejected() -> None:
    headers = _signed(BODY)
    headers["X-Timestamp"] = "2026-03-14T09:26:53+00:00"
    with pytest.raises(WebhookTimestampError) as caught:
        construct_event(BODY, headers, SECRET, path=PATH, now=NOW)
    assert caught.value.reason == "offset"


def test_an_empty_secret_is_a_programming_error() -> None:
    with pytest.raises(ValueError, match="secret"):
        construct_event(BODY, _signed(BODY), "", path=PATH, now=NOW)


def _failures() -> list[BaseException]:
    seen = SeenEventIds()
    construct_event(BODY, _signed(BODY), SECRET, path=PATH, now=NOW, seen=seen)
    cases = [
        (BODY.replace(b"125050", b"1"), _signed(BODY), {}),
        (BODY, _signed(BODY, at=NOW - timedelta(hours=1)), {}),
        (BODY, _signed(BODY, at=NOW + timedelta(hours=1)), {}),
        (BODY, _signed(BODY), {"seen": seen}),
        (b"{nope", _signed(b"{nope", event_id=None), {}),
    ]
    caught: list[BaseException] = []
    for body, headers, extra in cases:
        try:
            construct_event(body, headers, SECRET, path=PATH, now=NOW, **extra)  # type: ignore[arg-type]
        except WebhookVerificationError as exc:
            caught.append(exc)
    return caught


def test_no_secret_signature_or_body_in_any_failure() -> None:
    signature = _signed(BODY)["X-Signature"]
    failures = _failures()
    assert len(failures) == 5
    for exc in failures:
        text = "".join(traceback.format_exception(exc)) + repr(exc)
        assert SECRET not in text
        assert signature not in text
        assert signature[:16] not in text
        assert "125050" not in text


def test_the_event_repr_holds_no_raw_body() -> None:
    event = construct_event(BODY, _signed(BODY), SECRET, path=PATH, now=NOW)
    assert BODY.decode() not in repr(event)
    assert "raw" not in event.model_dump()
