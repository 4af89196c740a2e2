"""The TR QR payload (EMVCo merchant-presented): fields, TLV structure and CRC, in pure Python."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from workbench.emvco import (
    CURRENCY_TRY,
    GUID,
    QrFields,
    build_payload,
    crc16_ccitt_false,
    parse_tlv,
    verify_crc,
)

SESSION = "0f8fad5b-d9cb-469f-a165-70867728950e"


def _fields(amount: int = 123_456, **extra: str) -> QrFields:
    values = {"merchant_id": "mrc_demo", "merchant_name": "Demo Merchant",
              "session_id": SESSION, "reference": "order-42", **extra}  # fmt: skip
    return QrFields(amount=amount, **values)


@pytest.mark.parametrize(
    ("data", "crc"),
    [(b"123456789", 0x29B1), (b"", 0xFFFF), (b"A", 0xB915)],
)
def test_crc16_ccitt_false_check_values(data: bytes, crc: int) -> None:
    assert crc16_ccitt_false(data) == crc


def _bitwise_crc(data: bytes) -> int:
    """The textbook bit-by-bit CRC-16/CCITT-FALSE, to check binascii's against."""
    crc = 0xFFFF
    for byte in data:
        crc ^= byte << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) if crc & 0x8000 else crc << 1
            crc &= 0xFFFF
    return crc


@given(st.binary(max_size=300))
def test_crc_matches_the_bitwise_definition(data: bytes) -> None:
    assert crc16_ccitt_false(data) == _bitwise_crc(data)


def test_payload_fields_decode() -> None:
    payload = build_payload(_fields())
    fields = parse_tlv(payload)
    assert list(fields) == ["00", "01", "26", "52", "53", "54", "58", "59", "60", "62", "63"]
    assert fields["00"] == "01"
    assert fields["01"] == "12"
    assert fields["53"] == CURRENCY_TRY == "949"
    assert fields["54"] == "1234.56"
    assert fields["58"] == "TR"
    assert fields["59"] == "Demo Merchant"
    assert parse_tlv(fields["26"]) == {"00": GUID, "01": "mrc_demo", "02": SESSION}
    assert parse_tlv(fields["62"]) == {"05": "order-42"}
    # Tag 63 is the CRC of everything before its value, "6304" included.
    assert payload.endswith("6304" + fields["63"])
    assert int(fields["63"], 16) == crc16_ccitt_false(payload[:-4].encode())
    assert fields["63"] == fields["63"].upper()


def test_a_changed_character_breaks_the_crc() -> None:
    payload = build_payload(_fields())
    assert verify_crc(payload)
    tampered = payload.replace("1234.56", "1234.57")
    assert not verify_crc(tampered)
    assert not verify_crc(payload[:-1])


def test_long_or_non_ascii_text_is_cut_to_the_field_limits() -> None:
    fields = parse_tlv(build_payload(_fields(merchant_name="Çiçek Pazarı Gıda Ticaret Limited",
                                             reference="x" * 60)))  # fmt: skip
    assert len(fields["59"]) == 25
    assert fields["59"].isascii()
    assert parse_tlv(fields["62"])["05"] == "x" * 25


def test_amount_must_be_positive_and_fit_the_field() -> None:
    with pytest.raises(ValueError, match="positive amount"):
        build_payload(_fields(amount=0))
    with pytest.raises(ValueError, match="13 characters"):
        build_payload(_fields(amount=10**13))


def test_truncated_tlv_is_refused() -> None:
    with pytest.raises(ValueError, match="runs past the end"):
        parse_tlv("000201" + "5410" + "12.5")


@given(st.integers(min_value=1, max_value=10**11))
def test_any_amount_round_trips_in_lira(amount: int) -> None:
    payload = build_payload(_fields(amount=amount))
    assert verify_crc(payload)
    lira, kurus = parse_tlv(payload)["54"].split(".")
    assert int(lira) * 100 + int(kurus) == amount


def test_a_turkish_reference_keeps_its_letters_in_ascii() -> None:
    fields = parse_tlv(build_payload(_fields(reference="ord-ş-1 Işık Çiçekçi ĞÜÖ 日本")))
    reference = parse_tlv(fields["62"])["05"]
    assert reference == "ord-s-1 Isik Cicekci GUO ??"[:25]
    assert reference.isascii()
