"""The spec's "Rules a test can check" for signing, as unit and property tests."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from workbench import signing

SECRET = "sk_test_rules_0000"
NOW = datetime(2026, 3, 14, 9, 26, 53, tzinfo=UTC)
TS = "2026-03-14T09:26:53Z"

paths = st.from_regex(r"/v1/[a-z]{1,10}(/[a-zA-Z0-9_]{1,12}){0,2}", fullmatch=True)
methods = st.sampled_from(["GET", "POST", "DELETE", "PUT", "PATCH"])
bodies = st.binary(min_size=0, max_size=200)


def _verify(
    *,
    signature: str,
    timestamp: str = TS,
    method: str = "POST",
    path: str = "/v1/x",
    body: bytes = b"",
    now: datetime = NOW,
) -> None:
    signing.verify(
        SECRET,
        signature=signature,
        timestamp=timestamp,
        method=method,
        path=path,
        body=body,
        now=now,
    )


@given(method=methods, path=paths, body=bodies)
def test_altered_method_case_changes_signature(method: str, path: str, body: bytes) -> None:
    good = signing.sign(SECRET, TS, method, path, body)
    assert signing.sign(SECRET, TS, method.lower(), path, body) != good
    with pytest.raises(signing.SignatureMismatch):
        _verify(
            signature=signing.sign(SECRET, TS, method.lower(), path, body),
            method=method,
            path=path,
            body=body,
        )


@given(method=methods, path=paths, other=paths, body=bodies)
def test_altered_path_changes_signature(method: str, path: str, other: str, body: bytes) -> None:
    if other == path:
        return
    assert signing.sign(SECRET, TS, method, other, body) != signing.sign(
        SECRET, TS, method, path, body
    )


@given(path=paths, query=st.from_regex(r"[a-z]{1,6}=[a-z0-9]{1,6}", fullmatch=True))
def test_query_string_inclusion_changes_signature(path: str, query: str) -> None:
    with_query = f"{path}?{query}"
    assert signing.canonical_path(with_query) == path
    assert signing.sign(SECRET, TS, "GET", with_query, b"") != signing.sign(
        SECRET, TS, "GET", path, b""
    )


@given(
    body=st.binary(min_size=1, max_size=200),
    index=st.integers(min_value=0),
    flip=st.integers(1, 255),
)
def test_one_changed_body_byte_changes_signature(body: bytes, index: int, flip: int) -> None:
    position = index % len(body)
    changed = bytearray(body)
    changed[position] ^= flip
    assert signing.sign(SECRET, TS, "POST", "/v1/x", bytes(changed)) != signing.sign(
        SECRET, TS, "POST", "/v1/x", body
    )
    with pytest.raises(signing.SignatureMismatch):
        _verify(signature=signing.sign(SECRET, TS, "POST", "/v1/x", body), body=bytes(changed))


@given(seconds=st.integers(min_value=-299, max_value=299).filter(lambda s: s != 0))
def test_altered_timestamp_text_changes_signature(seconds: int) -> None:
    other = signing.format_timestamp(NOW + timedelta(seconds=seconds))
    assert signing.sign(SECRET, other, "POST", "/v1/x", b"") != signing.sign(
        SECRET, TS, "POST", "/v1/x", b""
    )
    with pytest.raises(signing.SignatureMismatch):
        _verify(signature=signing.sign(SECRET, other, "POST", "/v1/x", b""))


def test_same_instant_written_differently_is_a_different_signature() -> None:
    assert signing.sign(SECRET, "2026-03-14T09:26:53.000Z", "GET", "/v1/x", b"") != (
        signing.sign(SECRET, TS, "GET", "/v1/x", b"")
    )


@pytest.mark.parametrize("direction", [1, -1], ids=["future", "past"])
def test_skew_window_boundaries(direction: int) -> None:
    for seconds, ok in ((300, True), (301, False)):
        ts = signing.format_timestamp(NOW + timedelta(seconds=direction * seconds))
        sig = signing.sign(SECRET, ts, "GET", "/v1/x", b"")
        if ok:
            _verify(signature=sig, timestamp=ts, method="GET")
        else:
            with pytest.raises(signing.TimestampInvalid) as info:
                _verify(signature=sig, timestamp=ts, method="GET")
            assert info.value.reason == "skew"


@given(offset=st.integers(min_value=301, max_value=10**7), sign_=st.sampled_from([1, -1]))
def test_any_skew_beyond_300s_is_rejected(offset: int, sign_: int) -> None:
    ts = signing.format_timestamp(NOW + timedelta(seconds=sign_ * offset))
    with pytest.raises(signing.TimestampInvalid):
        _verify(signature=signing.sign(SECRET, ts, "GET", "/v1/x", b""), timestamp=ts)


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        (None, "missing"),
        ("", "missing"),
        ("yesterday", "malformed"),
        ("2026-03-14 09:26:53Z", "malformed"),
        ("2026-03-14T09:26:53", "malformed"),
        ("2026-13-14T09:26:53Z", "malformed"),
        ("1773480413", "malformed"),
        ("2026-03-14T09:26:53z", "malformed"),
    ],
)
def test_missing_or_malformed_timestamp(text: str | None, reason: str) -> None:
    with pytest.raises(signing.TimestampInvalid) as info:
        _verify(signature="0" * 64, timestamp=text)
    assert info.value.reason == reason


@pytest.mark.parametrize(
    ("text", "microsecond"),
    [
        ("2026-03-14T09:26:53.1Z", 100_000),
        ("2026-03-14T09:26:53.123Z", 123_000),  # JavaScript's toISOString()
        ("2026-03-14T09:26:53.123456Z", 123_456),  # Python's isoformat()
        ("2026-03-14T09:26:53.1234567Z", 123_456),  # .NET's "o"
        ("2026-03-14T09:26:53.123456789Z", 123_456),  # Go's RFC3339Nano
    ],
)
def test_a_fraction_of_a_second_is_iso_8601_and_accepted(text: str, microsecond: int) -> None:
    assert signing.parse_timestamp(text) == NOW.replace(microsecond=microsecond)
    _verify(signature=signing.sign(SECRET, text, "POST", "/v1/x", b""), timestamp=text)


@pytest.mark.parametrize(
    "text",
    ["2026-03-14T09:26:53.Z", "2026-03-14T09:26:53,123Z", "2026-03-14T09:26:53.1234567890Z"],
)
def test_a_fraction_without_digits_after_a_comma_or_past_nanoseconds_is_malformed(
    text: str,
) -> None:
    with pytest.raises(signing.TimestampInvalid) as info:
        signing.parse_timestamp(text)
    assert info.value.reason == "malformed"


@pytest.mark.parametrize(
    "text", ["2026-03-14T09:26:53+00:00", "2026-03-14T12:26:53+03:00", "2026-03-14T09:26:53-0000"]
)
def test_timestamp_with_offset_is_invalid(text: str) -> None:
    with pytest.raises(signing.TimestampInvalid) as info:
        _verify(signature=signing.sign(SECRET, text, "POST", "/v1/x", b""), timestamp=text)
    assert info.value.reason == "offset"


def test_timestamp_checked_before_signature() -> None:
    with pytest.raises(signing.TimestampInvalid):
        _verify(signature="not-even-hex", timestamp="nope")


def test_missing_signature_is_a_mismatch() -> None:
    with pytest.raises(signing.SignatureMismatch):
        signing.verify(
            SECRET, signature=None, timestamp=TS, method="GET", path="/v1/x", body=b"", now=NOW
        )


def test_empty_body_hashes_the_empty_string_not_braces_or_null() -> None:
    assert signing.body_sha256(b"") == signing.EMPTY_BODY_SHA256
    assert signing.EMPTY_BODY_SHA256 == (
        "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    )
    assert signing.body_sha256(b"{}") != signing.EMPTY_BODY_SHA256
    assert signing.body_sha256(b"null") != signing.EMPTY_BODY_SHA256


@pytest.mark.parametrize(
    ("url", "path"),
    [
        ("https://api.example/v1/payments/pay_1?expand=x#frag", "/v1/payments/pay_1"),
        ("/v1/payments/pay_1/", "/v1/payments/pay_1"),
        ("/", "/"),
        ("", "/"),
        ("http://127.0.0.1:8765/v1/subscriptions?limit=2", "/v1/subscriptions"),
    ],
)
def test_canonical_path(url: str, path: str) -> None:
    assert signing.canonical_path(url) == path


def test_format_timestamp_is_utc_with_z_and_refuses_naive() -> None:
    from datetime import timezone

    istanbul = timezone(timedelta(hours=3))
    assert signing.format_timestamp(datetime(2026, 3, 14, 12, 26, 53, tzinfo=istanbul)) == TS
    with pytest.raises(ValueError, match="aware"):
        signing.format_timestamp(datetime(2026, 3, 14, 9, 26, 53))
    now_text = signing.format_timestamp()
    assert now_text.endswith("Z")
    assert abs(signing.parse_timestamp(now_text) - datetime.now(UTC)) < timedelta(seconds=5)


@given(
    moment=st.datetimes(
        min_value=datetime(2000, 1, 1), max_value=datetime(2100, 1, 1), timezones=st.just(UTC)
    )
)
def test_format_parse_round_trip(moment: datetime) -> None:
    text = signing.format_timestamp(moment)
    assert signing.parse_timestamp(text) == moment.replace(microsecond=0)
